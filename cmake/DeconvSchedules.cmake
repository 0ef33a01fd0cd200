# Build-time use of a schedule database (docs/tuning.md):
#
#   -DDECONV_SCHEDULES=DB.json        compile the database into the library (in place of
#                                     schedules/<arch>.json) and AOT-compile the kernel variants
#                                     its entries pin (policy kernel_q_tile / kernel_vectors)
#   -DDECONV_SCHEDULES_ONLY=ON        and build the kernel matrix only for the dtypes and ranks of
#                                     the database's layers: a library specialised to a model
#
#   -DDECONV_KERNEL_CANDIDATES=all    also AOT-compile candidate register tiles of the
#                                     channel-vectorized kernels for every rank and dtype of the
#                                     matrix, for `deconv tune` to search (a tuning build: trim it
#                                     with DECONV_DTYPES / DECONV_RANKS); or a list such as
#                                     "q6v0;q3v3" (q_tile, vectors; 0 = the target's default)
#
# The variants reach generators/CMakeLists.txt as "rank,dtype,q_tile,vectors" items (rank and
# dtype "*" for every one of the matrix) in the global property DECONV_SCHEDULE_VARIANTS.
set(DECONV_KERNEL_CANDIDATES "" CACHE STRING
    "Candidate register tiles to build for deconv tune: 'all', or a list of qNvM (N positions, M vectors)")
set(DECONV_SCHEDULES "" CACHE FILEPATH "Schedule database to build into the library (deconv tune --out)")
option(DECONV_SCHEDULES_ONLY "Build kernels only for the dtypes and ranks of DECONV_SCHEDULES's layers" OFF)

# Fails the configuration unless (q_tile, vectors) is a tile the channels-last schedule can take as
# a variant: it has branches of 4 positions and of 1 vector of its own, and a variant with either
# would repeat one, which Halide refuses (generators/schedules/cpu_channels_last_schedule.h). 0
# keeps the target's default. `what` names the source in the message.
function(deconv_check_tile_variant what q v)
  if(q EQUAL 4 OR q LESS 0 OR q GREATER 16 OR (q GREATER 0 AND q LESS 3))
    message(FATAL_ERROR "deconv: ${what} pins kernel_q_tile ${q}: use 3 or 5 to 16")
  endif()
  if(v EQUAL 1 OR v LESS 0 OR v GREATER 8)
    message(FATAL_ERROR "deconv: ${what} pins kernel_vectors ${v}: use 2 to 8")
  endif()
endfunction()

set(_deconv_db_variants "")
if(DECONV_SCHEDULES)
  if(NOT EXISTS "${DECONV_SCHEDULES}")
    message(FATAL_ERROR "deconv: DECONV_SCHEDULES names '${DECONV_SCHEDULES}', which does not exist")
  endif()
  file(READ "${DECONV_SCHEDULES}" _deconv_db)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${DECONV_SCHEDULES}")
  string(JSON _deconv_db_format ERROR_VARIABLE _deconv_db_error GET "${_deconv_db}" format)
  string(JSON _deconv_db_version ERROR_VARIABLE _deconv_db_error2 GET "${_deconv_db}" version)
  if(_deconv_db_error OR NOT _deconv_db_format STREQUAL "deconv-schedules" OR NOT _deconv_db_version EQUAL 1)
    message(FATAL_ERROR "deconv: DECONV_SCHEDULES '${DECONV_SCHEDULES}' is not a version 1 deconv-schedules "
                        "database (format '${_deconv_db_format}', version '${_deconv_db_version}')")
  endif()
  string(JSON _deconv_db_n LENGTH "${_deconv_db}" entries)
  set(_deconv_db_dtypes "")
  set(_deconv_db_ranks "")
  if(_deconv_db_n GREATER 0)
    math(EXPR _last "${_deconv_db_n} - 1")
    foreach(i RANGE ${_last})
      string(JSON _dtype GET "${_deconv_db}" entries ${i} layer dtype)
      string(JSON _rank LENGTH "${_deconv_db}" entries ${i} layer strides)
      list(APPEND _deconv_db_dtypes ${_dtype})
      list(APPEND _deconv_db_ranks ${_rank})
      string(JSON _q ERROR_VARIABLE _no_q GET "${_deconv_db}" entries ${i} policy kernel_q_tile)
      string(JSON _v ERROR_VARIABLE _no_v GET "${_deconv_db}" entries ${i} policy kernel_vectors)
      if(_no_q)
        set(_q 0)
      endif()
      if(_no_v)
        set(_v 0)
      endif()
      if(NOT _q EQUAL 0 OR NOT _v EQUAL 0)
        deconv_check_tile_variant("DECONV_SCHEDULES entry ${i}" ${_q} ${_v})
        list(APPEND _deconv_db_variants "${_rank},${_dtype},${_q},${_v}")
      endif()
    endforeach()
  endif()
  list(REMOVE_DUPLICATES _deconv_db_variants)
  list(REMOVE_DUPLICATES _deconv_db_dtypes)
  list(REMOVE_DUPLICATES _deconv_db_ranks)
  if(DECONV_SCHEDULES_ONLY)
    if(NOT _deconv_db_dtypes)
      message(FATAL_ERROR "deconv: DECONV_SCHEDULES_ONLY: '${DECONV_SCHEDULES}' has no entries")
    endif()
    # Shadows the cache variables for this configuration: the matrix of the model's layers.
    set(DECONV_DTYPES ${_deconv_db_dtypes})
    set(DECONV_RANKS ${_deconv_db_ranks})
    message(STATUS "deconv: kernel matrix of ${DECONV_SCHEDULES}: dtypes ${DECONV_DTYPES}, ranks ${DECONV_RANKS}")
  endif()
  message(STATUS "deconv: tuned kernel variants (rank,dtype,q_tile,vectors): ${_deconv_db_variants}")
elseif(DECONV_SCHEDULES_ONLY)
  message(FATAL_ERROR "deconv: DECONV_SCHEDULES_ONLY needs -DDECONV_SCHEDULES=DB.json")
endif()

# Candidate tiles: "all" is every tile of 2-4 vectors and 3-8 positions (those past the register
# file spill, which the tuner then measures and passes over), each knob also alone.
if(DECONV_KERNEL_CANDIDATES STREQUAL "all")
  set(_candidates "")
  foreach(q 0 3 5 6 7 8)
    foreach(v 0 2 3 4)
      if(NOT (q EQUAL 0 AND v EQUAL 0))
        list(APPEND _candidates "q${q}v${v}")
      endif()
    endforeach()
  endforeach()
else()
  set(_candidates ${DECONV_KERNEL_CANDIDATES})
endif()
foreach(c IN LISTS _candidates)
  if(NOT c MATCHES "^q([0-9]+)v([0-9]+)$" OR c STREQUAL "q0v0")
    message(FATAL_ERROR "deconv: DECONV_KERNEL_CANDIDATES names '${c}': use 'all' or items qNvM "
                        "(N positions, M vectors, 0 = the target's default, not both 0)")
  endif()
  deconv_check_tile_variant("DECONV_KERNEL_CANDIDATES item ${c}" ${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  list(APPEND _deconv_db_variants "*,*,${CMAKE_MATCH_1},${CMAKE_MATCH_2}")
endforeach()
if(_candidates)
  list(LENGTH _candidates _n)
  message(STATUS "deconv: ${_n} candidate register tiles for deconv tune: ${_candidates}")
endif()
set_property(GLOBAL PROPERTY DECONV_SCHEDULE_VARIANTS "${_deconv_db_variants}")
