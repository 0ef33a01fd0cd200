# Build-time use of a schedule database (docs/tuning.md):
#
#   -DDECONV_SCHEDULES=DB.json        compile the database into the library (in place of
#                                     schedules/<arch>.json) and AOT-compile the kernel variants
#                                     its entries pin (policy kernel_q_tile / kernel_vectors)
#   -DDECONV_SCHEDULES_ONLY=ON        and build the kernel matrix only for the dtypes and ranks of
#                                     the database's layers: a library specialised to a model
#
# deconv_schedule_variants(<out-var>) returns the variants as "rank;dtype;q_tile;vectors" items
# joined by "|".
set(DECONV_SCHEDULES "" CACHE FILEPATH "Schedule database to build into the library (deconv tune --out)")
option(DECONV_SCHEDULES_ONLY "Build kernels only for the dtypes and ranks of DECONV_SCHEDULES's layers" OFF)

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
  set(_deconv_db_variants "")
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
        # The channels-last schedule has branches of 4 positions and of 1 vector of its own: a
        # variant with either would repeat one, which Halide refuses (generators/schedules/
        # cpu_channels_last_schedule.h). 0 keeps the target's default.
        if(_q EQUAL 4 OR _q LESS 0 OR _q GREATER 16 OR (_q GREATER 0 AND _q LESS 3))
          message(FATAL_ERROR "deconv: DECONV_SCHEDULES entry ${i} pins kernel_q_tile ${_q}: use 3 or 5 to 16")
        endif()
        if(_v EQUAL 1 OR _v LESS 0 OR _v GREATER 8)
          message(FATAL_ERROR "deconv: DECONV_SCHEDULES entry ${i} pins kernel_vectors ${_v}: use 2 to 8")
        endif()
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
  set_property(GLOBAL PROPERTY DECONV_SCHEDULE_VARIANTS "${_deconv_db_variants}")
elseif(DECONV_SCHEDULES_ONLY)
  message(FATAL_ERROR "deconv: DECONV_SCHEDULES_ONLY needs -DDECONV_SCHEDULES=DB.json")
endif()
