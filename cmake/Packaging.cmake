# `cmake --install` and CPack (.deb and .tar.gz). Components: `perfgap` (the executable, the
# perfgap-health link, example /etc/perfgap files, man pages, bash completion, the systemd
# service and timer) and `collbench`
# (perfgap-collbench and its MPI plugin: dynamically linked, they dlopen MPI/NCCL).

# Man pages from this build's --help (packaging/gen-man.sh); a cross build runs the binary
# under CMAKE_CROSSCOMPILING_EMULATOR (qemu-user) or has none.
set(PERFGAP_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(PERFGAP_MAN_PAGES perfgap)
# The commands of `perfgap --help`, as packaging/gen-man.sh lists them (ctest man.pages_cover_commands).
foreach(c check analyze gap snapshot fleet health fanout sweep compare explain profile probe history expect version)
  list(APPEND PERFGAP_MAN_PAGES perfgap-${c})
endforeach()
list(TRANSFORM PERFGAP_MAN_PAGES PREPEND ${PERFGAP_MAN_DIR}/ OUTPUT_VARIABLE PERFGAP_MAN_FILES)
list(TRANSFORM PERFGAP_MAN_FILES APPEND .1)
if(NOT CMAKE_CROSSCOMPILING OR CMAKE_CROSSCOMPILING_EMULATOR)
  add_custom_command(OUTPUT ${PERFGAP_MAN_FILES}
                     COMMAND ${PROJECT_SOURCE_DIR}/packaging/gen-man.sh ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:perfgap> ${PERFGAP_MAN_DIR}
                     DEPENDS perfgap ${PROJECT_SOURCE_DIR}/packaging/gen-man.sh
                     COMMENT "Man pages from perfgap --help")
  add_custom_target(perfgap-man ALL DEPENDS ${PERFGAP_MAN_FILES})
  install(FILES ${PERFGAP_MAN_FILES} DESTINATION share/man/man1 COMPONENT perfgap)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/packaging/perfgap.bash-completion DESTINATION share/bash-completion/completions
        RENAME perfgap COMPONENT perfgap)
# The example configuration goes to /etc/perfgap (under DESTDIR when set) and never replaces a
# file already there: an operator's thresholds survive a reinstall. Every line of both files
# is a comment, so installing them changes no result.
install(CODE "
  foreach(f config.yaml health.yaml)
    set(dst \"\$ENV{DESTDIR}/etc/perfgap/\${f}\")
    if(EXISTS \"\${dst}\")
      message(STATUS \"Kept: \${dst}\")
    else()
      file(INSTALL \"${PROJECT_SOURCE_DIR}/packaging/\${f}\" DESTINATION /etc/perfgap)  # DESTDIR is prepended
    endif()
  endforeach()" COMPONENT perfgap)

# The systemd service and timer (packaging/systemd, docs/MONITORING.md) under PREFIX/lib/systemd/system
# (/usr/lib/systemd/system in the .deb), naming the perfgap of this prefix. Installed disabled:
# no maintainer script enables them.
install(CODE "
  foreach(u perfgap.service perfgap.timer)
    file(READ \"${PROJECT_SOURCE_DIR}/packaging/systemd/\${u}\" text)
    string(REPLACE \"ExecStart=/usr/bin/perfgap \" \"ExecStart=\${CMAKE_INSTALL_PREFIX}/bin/perfgap \" text \"\${text}\")
    file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/\${u}\" \"\${text}\")
    message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/\${u}\")
  endforeach()" COMPONENT perfgap)

set(CPACK_PACKAGE_NAME perfgap)
set(CPACK_PACKAGE_VENDOR perfgap)
set(CPACK_PACKAGE_CONTACT "perfgap maintainers <perfgap@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Read-only performance diagnosis for GPU training nodes and clusters")
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_SET_DESTDIR ON)   # /etc/perfgap and /usr/... land in the package, never on this machine
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)  # what CPack installs with under CPACK_SET_DESTDIR
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)  # one .tar.gz with everything
set(CPACK_DEB_COMPONENT_INSTALL ON)       # perfgap_*.deb and perfgap-collbench_*.deb
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PERFGAP_PACKAGE_NAME perfgap)
set(CPACK_DEBIAN_COLLBENCH_PACKAGE_NAME perfgap-collbench)
set(CPACK_DEBIAN_PERFGAP_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_COLLBENCH_PACKAGE_SECTION admin)
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  set(_pg_arch aarch64)
else()
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
  set(_pg_arch x86_64)
endif()
set(CPACK_PACKAGE_FILE_NAME perfgap-${PROJECT_VERSION}-${_pg_arch})
if(PERFGAP_STATIC)
  # The static executable depends on nothing; dpkg lists no Depends.
  set(CPACK_DEBIAN_PERFGAP_PACKAGE_SHLIBDEPS OFF)
else()
  set(CPACK_DEBIAN_PERFGAP_PACKAGE_SHLIBDEPS ON)
endif()
set(CPACK_DEBIAN_COLLBENCH_PACKAGE_SHLIBDEPS ON)
# The /etc files are conffiles (dpkg keeps an operator's edits; purge removes them). No
# maintainer scripts.
file(WRITE ${PROJECT_BINARY_DIR}/deb/conffiles "/etc/perfgap/config.yaml\n/etc/perfgap/health.yaml\n")
set(CPACK_DEBIAN_PERFGAP_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/deb/conffiles)
set(CPACK_COMPONENTS_ALL perfgap)
if(TARGET perfgap-collbench)
  list(APPEND CPACK_COMPONENTS_ALL collbench)
endif()
include(CPack)
