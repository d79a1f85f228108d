# Installs the library with an exported CMake package (find_package(sightline)) and a relocatable
# pkg-config file. Nothing optional is referenced, so a consumer pulls in no other package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(sightline_installed sightline)
if(TARGET sightline_c)
  list(APPEND sightline_installed sightline_c)  # the C API's shared library
endif()
install(TARGETS ${sightline_installed} EXPORT sightlineTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/sightline DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT sightlineTargets NAMESPACE sightline:: FILE sightlineTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sightline)

configure_package_config_file(cmake/sightlineConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/sightlineConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sightline)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sightlineConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sightlineConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/sightlineConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sightline)

set(SIGHTLINE_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH SIGHTLINE_PC_TO_PREFIX /prefix/${SIGHTLINE_PC_DIR} /prefix)
string(REGEX REPLACE "/$" "" SIGHTLINE_PC_TO_PREFIX "${SIGHTLINE_PC_TO_PREFIX}")
configure_file(cmake/sightline.pc.in ${CMAKE_CURRENT_BINARY_DIR}/sightline.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sightline.pc DESTINATION ${SIGHTLINE_PC_DIR})
