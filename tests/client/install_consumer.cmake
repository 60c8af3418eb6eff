# ctest's client_install_consumer: installs the build tree into a fresh prefix, then builds and runs
# consumer/ against that prefix alone. Every step must succeed; the consumer checks what it can reach.
cmake_minimum_required(VERSION 3.25)

foreach(var ECSNET_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "install_consumer.cmake needs -D${var}=...")
    endif()
endforeach()
if(NOT BUILD_TYPE)
    set(BUILD_TYPE Release)
endif()

function(run_step what)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT status EQUAL 0)
        message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
    endif()
    message(STATUS "${what}: ok")
    set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

# The install copies what the build produced (it builds nothing).
run_step("install" ${CMAKE_COMMAND} --install ${ECSNET_BUILD_DIR} --prefix ${prefix})
if(NOT EXISTS ${prefix}/lib/cmake/ecsnet/ecsnetConfig.cmake OR NOT EXISTS ${prefix}/include/ecsnet/v1/envelope.pb.h)
    message(FATAL_ERROR "the install lacks the package config or the generated headers")
endif()

# The C API: header, shared library and a pkg-config file that finds them in this prefix (relocatable).
if(NOT EXISTS ${prefix}/include/ecsnet/client.h OR NOT EXISTS ${prefix}/lib/libecsnet_client.so
   OR NOT EXISTS ${prefix}/lib/pkgconfig/ecsnet-client.pc)
    message(FATAL_ERROR "the install lacks the C API (ecsnet/client.h, libecsnet_client.so, ecsnet-client.pc)")
endif()
find_program(PKG_CONFIG_EXECUTABLE pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
run_step("pkg-config ecsnet-client" ${PKG_CONFIG_EXECUTABLE} --cflags --libs ecsnet-client)
if(NOT step_output MATCHES "-L${prefix}/lib/pkgconfig/../../lib -lecsnet_client")
    message(FATAL_ERROR "ecsnet-client.pc does not point into the prefix: ${step_output}")
endif()

set(flags "")
if(SANITIZE)
    # The installed libraries are instrumented: the consumer links the same runtime.
    set(flags -DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
endif()
run_step("configure the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF ${flags})
run_step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("run the consumer" ${WORK_DIR}/build/ecsnet_consumer)
message(STATUS "consumer said: ${step_output}")
