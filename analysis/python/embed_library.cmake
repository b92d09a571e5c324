# Writes OUTPUT, a C++ source holding every .py file under LIBRARY_DIR (shardlens' library models)
# with its path relative to LIBRARY_DIR, for library_files.h.
#   cmake -DLIBRARY_DIR=dir -DOUTPUT=file.cpp -P embed_library.cmake
file(GLOB_RECURSE files RELATIVE "${LIBRARY_DIR}" "${LIBRARY_DIR}/*.py")
list(SORT files)
set(entries "")
foreach(rel IN LISTS files)
  file(READ "${LIBRARY_DIR}/${rel}" content)
  string(FIND "${content}" ")shardlens_lib\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${rel} contains the raw-string delimiter )shardlens_lib\"")
  endif()
  string(APPEND entries "  {\"${rel}\", R\"shardlens_lib(${content})shardlens_lib\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from analysis/python/library by embed_library.cmake: do not edit.\n"
  "#include <algorithm>\n#include <iterator>\n#include \"python/library_files.h\"\n"
  "namespace shardlens::python {\nnamespace {\n"
  "struct LibraryFile { const char* path; const char* text; };\n"
  "const LibraryFile kFiles[] = {\n${entries}  {nullptr, nullptr}};\n"
  "}  // namespace\n"
  "const char* library_file(std::string_view p) {\n"
  "  for (const LibraryFile* f = kFiles; f->path; ++f) if (p == f->path) return f->text;\n"
  "  return nullptr;\n}\n"
  "bool library_directory(std::string_view d) {\n"
  "  for (const LibraryFile* f = kFiles; f->path; ++f) {\n"
  "    std::string_view p = f->path;\n"
  "    if (d.empty() || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/')) return true;\n"
  "  }\n  return false;\n}\n"
  "std::vector<std::string_view> library_paths() {\n"
  "  std::vector<std::string_view> out;\n"
  "  for (const LibraryFile* f = kFiles; f->path; ++f) out.push_back(f->path);\n  return out;\n}\n"
  "}  // namespace shardlens::python\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
