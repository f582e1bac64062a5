# cmake/Packaging.cmake — the documents cmake --install adds, and the Debian
# package: `cpack -G DEB` in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr (the package installs where the units say).
# postinst creates the teenyc user and the directories (sysusers, tmpfiles)
# and tells systemd about the units; it enables nothing by itself.
include(GNUInstallDirs)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/architecture.md
              ${CMAKE_SOURCE_DIR}/docs/client.md ${CMAKE_SOURCE_DIR}/docs/dsl.md
              ${CMAKE_SOURCE_DIR}/docs/operations.md ${CMAKE_SOURCE_DIR}/docs/python.md
              ${CMAKE_SOURCE_DIR}/docs/benchmarks.md ${CMAKE_SOURCE_DIR}/proto/PROTOCOL.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME teenyc)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "teenyc maintainers <teenyc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU kernel compile-and-cache service (teenycd, tools, libraries, Python)")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libuv1, libsqlite3-0, libssl3, libmsgpackc2, libllvm19, libhiredis0.14, libjansson4, python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch | python3-cupy, redis-server | valkey-server")
configure_file(${CMAKE_SOURCE_DIR}/cmake/deb-postinst.in ${CMAKE_BINARY_DIR}/deb/postinst @ONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
