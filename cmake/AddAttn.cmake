# Thin wrappers over MLIR's helpers so every attn library is built, installed
# and exported the same way.

# add_attn_library(name ...) : a library installed and exported in the
# AttnDialect package. Arguments are those of add_mlir_library.
function(add_attn_library name)
  add_mlir_library(${name} ${ARGN} DISABLE_INSTALL)
  set_property(GLOBAL APPEND PROPERTY ATTN_EXPORTED_LIBS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${ATTN_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${ATTN_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  # The AttnDialect component is the embeddable package (libraries, headers,
  # CMake config); `cmake --install --component AttnDialect` needs only the
  # libraries built, not every tool.
  install(TARGETS ${name} EXPORT AttnDialectTargets
    ARCHIVE DESTINATION lib COMPONENT AttnDialect
    LIBRARY DESTINATION lib COMPONENT AttnDialect)
endfunction()

# add_attn_tool(name sources...) : an executable linked against the MLIR and
# LLVM dylibs.
function(add_attn_tool name)
  add_llvm_executable(${name} ${ARGN})
  llvm_update_compile_flags(${name})
  install(TARGETS ${name} RUNTIME DESTINATION bin)
endfunction()

# add_attn_doc(td_file out_name out_dir tblgen_flags...) : generated Markdown
# reference, gathered under the attn-doc target.
function(add_attn_doc td_file out_name out_dir)
  set(LLVM_TARGET_DEFINITIONS ${td_file})
  mlir_tablegen(${out_name}.md ${ARGN})
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${out_name}.md)
  set(dst ${ATTN_BINARY_DIR}/docs/${out_dir}/${out_name}.md)
  add_custom_command(OUTPUT ${dst}
    COMMAND ${CMAKE_COMMAND} -E copy ${gen} ${dst}
    DEPENDS ${gen})
  add_custom_target(${out_name}DocGen DEPENDS ${dst})
  add_dependencies(attn-doc ${out_name}DocGen)
endfunction()
