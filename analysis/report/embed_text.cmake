# Writes OUTPUT, a C++ source defining `const char NAME[]` with the bytes of INPUT (a data file kept
# as data, e.g. compiler_limits.json), so the library needs no file at run time.
#   cmake -DINPUT=file -DOUTPUT=file.cpp -DNAME=kSymbol -DNAMESPACE=ns -P embed_text.cmake
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hex_length)
set(bytes "")
set(column 0)
math(EXPR last "${hex_length} - 2")
if(hex_length GREATER 0)
  foreach(i RANGE 0 ${last} 2)
    string(SUBSTRING "${content}" ${i} 2 byte)
    string(APPEND bytes "0x${byte},")
    math(EXPR column "${column} + 1")
    if(column EQUAL 20)
      string(APPEND bytes "\n  ")
      set(column 0)
    endif()
  endforeach()
endif()
get_filename_component(input_name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${input_name} by embed_text.cmake: do not edit.\n"
  "namespace ${NAMESPACE} {\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = {\n  ${bytes}0x00};\n"
  "}  // namespace ${NAMESPACE}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
