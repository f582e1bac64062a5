# cmake/TeenyKernels.cmake — teeny_add_kernels(TARGET FILES...): typed C
# kernels for an executable or library.
#
# For each kernel file (C11 in the teenyc kernel language) it
#   1. type-checks it as host C: ${CMAKE_C_COMPILER} -std=c11 -fsyntax-only
#      -Wall -Wextra -Werror against teeny/dsl.h (one function, two
#      compilers: the C compiler checks names, arity and element types);
#   2. runs teenyc-gen, writing STEM.teeny.h and STEM.teeny.c into
#      ${CMAKE_CURRENT_BINARY_DIR}/teeny_gen/TARGET (STEM: the file name
#      without .c, made a C identifier);
#   3. adds the generated .c to TARGET, that directory to its include path,
#      and links TARGET with libteenyc-client.
# Then `#include "STEM.teeny.h"` and use K_init / K_compile / K_launch.
#
# Works inside the teenyc build (targets teenyc-gen and teenyc-client) and
# for installed copies (find_package(teenyc): teenyc::teenyc-gen and
# teenyc::teenyc-client; teenycConfig.cmake sets TEENY_KERNELS_INCLUDE_DIR).
#
#   find_package(teenyc REQUIRED)
#   add_executable(app app.c)
#   teeny_add_kernels(app kernels/vector_add.c kernels/softmax.c)
include_guard(GLOBAL)

if(NOT DEFINED TEENY_KERNELS_INCLUDE_DIR)
  # In the source tree: cmake/../include holds teeny/dsl.h.
  get_filename_component(TEENY_KERNELS_INCLUDE_DIR
                         "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
endif()
# Kept globally: the function may be called from any directory.
set_property(GLOBAL PROPERTY TEENY_KERNELS_INCLUDE_DIR "${TEENY_KERNELS_INCLUDE_DIR}")

function(teeny_add_kernels target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "teeny_add_kernels: '${target}' is not a target")
  endif()
  if(TARGET teenyc-gen)
    set(gen $<TARGET_FILE:teenyc-gen>)
    set(gen_dep teenyc-gen)
    set(client teenyc-client)
  elseif(TARGET teenyc::teenyc-gen)
    set(gen $<TARGET_FILE:teenyc::teenyc-gen>)
    set(gen_dep teenyc::teenyc-gen)
    set(client teenyc::teenyc-client)
  else()
    message(FATAL_ERROR "teeny_add_kernels: no teenyc-gen (find_package(teenyc) first)")
  endif()
  get_property(inc GLOBAL PROPERTY TEENY_KERNELS_INCLUDE_DIR)
  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/teeny_gen/${target})
  file(MAKE_DIRECTORY ${outdir})
  foreach(file IN LISTS ARGN)
    get_filename_component(abs ${file} ABSOLUTE)
    get_filename_component(stem ${file} NAME_WE)
    string(MAKE_C_IDENTIFIER ${stem} stem)
    add_custom_command(
      OUTPUT ${outdir}/${stem}.teeny.h ${outdir}/${stem}.teeny.c
      COMMAND ${CMAKE_C_COMPILER} -std=c11 -fsyntax-only -Wall -Wextra -Werror
              -I${inc} ${abs}
      COMMAND ${gen} ${abs} -o ${outdir} --name ${stem}
      DEPENDS ${abs} ${gen_dep} ${inc}/teeny/dsl.h
      COMMENT "teeny_add_kernels: host check and teenyc-gen ${file}"
      VERBATIM)
    target_sources(${target} PRIVATE ${outdir}/${stem}.teeny.c ${outdir}/${stem}.teeny.h)
  endforeach()
  target_include_directories(${target} PRIVATE ${outdir})
  target_link_libraries(${target} PRIVATE ${client})
endfunction()
