# FindAsio: the standalone (non-Boost) Asio headers, e.g. Debian's libasio-dev, which ships no CMake
# package of its own. Defines Asio_FOUND, Asio_INCLUDE_DIR, Asio_VERSION and the imported target
# Asio::Asio (headers, and the threads library Asio needs).
find_path(Asio_INCLUDE_DIR NAMES asio.hpp asio/version.hpp)

if(Asio_INCLUDE_DIR AND EXISTS "${Asio_INCLUDE_DIR}/asio/version.hpp")
    file(STRINGS "${Asio_INCLUDE_DIR}/asio/version.hpp" _asio_version_line REGEX "^#define ASIO_VERSION [0-9]+")
    string(REGEX REPLACE "^#define ASIO_VERSION ([0-9]+).*$" "\\1" _asio_version "${_asio_version_line}")
    math(EXPR _asio_major "${_asio_version} / 100000")
    math(EXPR _asio_minor "${_asio_version} / 100 % 1000")
    math(EXPR _asio_patch "${_asio_version} % 100")
    set(Asio_VERSION "${_asio_major}.${_asio_minor}.${_asio_patch}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Asio REQUIRED_VARS Asio_INCLUDE_DIR VERSION_VAR Asio_VERSION)

if(Asio_FOUND AND NOT TARGET Asio::Asio)
    find_package(Threads REQUIRED)
    add_library(Asio::Asio INTERFACE IMPORTED)
    set_target_properties(Asio::Asio PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Asio_INCLUDE_DIR}")
    target_link_libraries(Asio::Asio INTERFACE Threads::Threads)
endif()
mark_as_advanced(Asio_INCLUDE_DIR)
