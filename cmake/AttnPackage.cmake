# Installs the AttnDialect CMake package: headers, generated .inc files,
# libraries and AttnDialectConfig.cmake, so another MLIR compiler can
# find_package(AttnDialect) and link AttnDialect::AttnRegistration.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${ATTN_SOURCE_DIR}/include/AttnDialect
  DESTINATION include FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${ATTN_BINARY_DIR}/include/AttnDialect
  DESTINATION include FILES_MATCHING PATTERN "*.inc" PATTERN "*.h")

install(EXPORT AttnDialectTargets NAMESPACE AttnDialect::
  DESTINATION lib/cmake/AttnDialect)

configure_package_config_file(
  ${ATTN_SOURCE_DIR}/cmake/AttnDialectConfig.cmake.in
  ${ATTN_BINARY_DIR}/AttnDialectConfig.cmake
  INSTALL_DESTINATION lib/cmake/AttnDialect)
write_basic_package_version_file(
  ${ATTN_BINARY_DIR}/AttnDialectConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${ATTN_BINARY_DIR}/AttnDialectConfig.cmake
  ${ATTN_BINARY_DIR}/AttnDialectConfigVersion.cmake
  DESTINATION lib/cmake/AttnDialect)
