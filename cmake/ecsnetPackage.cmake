# `cmake --install` of the SDK: headers (ECS core, codec, generated .pb.h, transport, client), the static
# libraries,
# the .proto schemas, and a CMake package so that a game's CMakeLists.txt does
#   find_package(ecsnet CONFIG REQUIRED)
#   target_link_libraries(game PRIVATE ecsnet::client)
# Installed under <prefix>/include, <prefix>/lib, <prefix>/lib/cmake/ecsnet, <prefix>/share/ecsnet/proto.
include(CMakePackageConfigHelpers)

set(ecsnet_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ecsnet)

# The generated protobuf headers are found under <prefix>/include once installed.
target_include_directories(ecsnet_proto_messages INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(ecsnet_ecs PROPERTIES EXPORT_NAME ecs)
set_target_properties(ecsnet_proto_messages PROPERTIES EXPORT_NAME proto_messages)
set_target_properties(ecsnet_codec PROPERTIES EXPORT_NAME codec)
# Linked privately by the static libraries, so named in their link interface (as LINK_ONLY: its warning
# flags never reach a consumer's compilation).
set_target_properties(ecsnet_warnings PROPERTIES EXPORT_NAME warnings)

# The client links the UDP transport (and, through it, libsodium's pkg-config target: the package's config
# finds it again on the consumer's machine).
install(TARGETS ecsnet_ecs ecsnet_proto_messages ecsnet_codec ecsnet_arena ecsnet_transport ecsnet_client ecsnet_warnings
    EXPORT ecsnetTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/ecs/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/proto/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The demo game's headers (ecsnet::arena): the examples and the C API's demo helpers use them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/arena/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/transport/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/client-sdk/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_BINARY_DIR}/proto/generated/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.pb.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/proto/ecsnet/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ecsnet/proto/ecsnet
    FILES_MATCHING PATTERN "*.proto")

install(EXPORT ecsnetTargets NAMESPACE ecsnet:: DESTINATION ${ecsnet_package_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ecsnetConfig.cmake.in
    ${PROJECT_BINARY_DIR}/ecsnetConfig.cmake
    INSTALL_DESTINATION ${ecsnet_package_dir})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ecsnetConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/ecsnetConfig.cmake
    ${PROJECT_BINARY_DIR}/ecsnetConfigVersion.cmake
    ${PROJECT_SOURCE_DIR}/cmake/FindAsio.cmake
    DESTINATION ${ecsnet_package_dir})

# The C API: libecsnet_client.so (with its SONAME links) and a pkg-config file for C builds and bindings. Not
# in the CMake export set: a CMake game links ecsnet::client; the shared library is for everyone else.
install(TARGETS ecsnet_client_shared
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
file(RELATIVE_PATH ecsnet_pc_prefix_from_pcfiledir /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" ecsnet_pc_prefix_from_pcfiledir "${ecsnet_pc_prefix_from_pcfiledir}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/ecsnet-client.pc.in ${PROJECT_BINARY_DIR}/ecsnet-client.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ecsnet-client.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
