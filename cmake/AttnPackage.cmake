# Installs the AttnDialect CMake package: headers, generated .inc files,
# libraries and AttnDialectConfig.cmake, so another MLIR compiler can
# find_package(AttnDialect) and link AttnDialect::AttnRegistration.
#
# Included last from the top-level CMakeLists.txt, once every
# add_attn_library has run, so the package picks up every library.
include(CMakePackageConfigHelpers)

get_property(ATTN_EXPORTED_LIBS GLOBAL PROPERTY ATTN_EXPORTED_LIBS)

install(DIRECTORY ${ATTN_SOURCE_DIR}/include/AttnDialect
  DESTINATION include COMPONENT AttnDialect
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${ATTN_BINARY_DIR}/include/AttnDialect
  DESTINATION include COMPONENT AttnDialect
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)

install(EXPORT AttnDialectTargets NAMESPACE AttnDialect::
  DESTINATION lib/cmake/AttnDialect COMPONENT AttnDialect)

# The config finds the same MLIR the package was built against unless the
# consumer points MLIR_DIR elsewhere.
set(ATTN_PACKAGE_MLIR_DIR "${MLIR_DIR}")
configure_package_config_file(
  ${ATTN_SOURCE_DIR}/cmake/AttnDialectConfig.cmake.in
  ${ATTN_BINARY_DIR}/AttnDialectConfig.cmake
  INSTALL_DESTINATION lib/cmake/AttnDialect)
write_basic_package_version_file(
  ${ATTN_BINARY_DIR}/AttnDialectConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${ATTN_BINARY_DIR}/AttnDialectConfig.cmake
  ${ATTN_BINARY_DIR}/AttnDialectConfigVersion.cmake
  DESTINATION lib/cmake/AttnDialect COMPONENT AttnDialect)

# The package test (test/Package/install.test) installs the libraries, so
# the test suite must build all of them, including ones no tool links yet.
add_custom_target(attn-package-libs DEPENDS ${ATTN_EXPORTED_LIBS} AttnOpsIncGen)
foreach(target check-attn attn-test-depends)
  if(TARGET ${target})
    add_dependencies(${target} attn-package-libs)
  endif()
endforeach()

# test/Docs/generated-docs.test compares the checked-in reference with the
# generated one, so the suite builds it.
foreach(target check-attn attn-test-depends)
  if(TARGET ${target})
    add_dependencies(${target} attn-doc)
  endif()
endforeach()
