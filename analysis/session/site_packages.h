// Where the user's Python interpreter keeps installed libraries: its site-packages folders, asked of
// the interpreter itself (issue 34's search order, as pyright's: the script's folder and package
// root, PYTHONPATH, python-path, then these).
#pragma once

#include <string>
#include <vector>

namespace shardlens::session {

// The sys.path entries of `python` that hold installed packages (site-packages, dist-packages, and
// what their .pth files add; not the standard library, which the interpreter models, nor zips).
// Asked once per interpreter (again when its file changes) with `-I -c`: isolated (no PYTHONPATH,
// no user site, not the current folder), so nothing of a script's or a workspace's runs. Only for
// an interpreter the user named (the `python` setting, `--python`); empty when `python` is empty
// or does not answer, with the reason in *why.
std::vector<std::string> interpreter_site_packages(const std::string& python, std::string* why = nullptr);

}  // namespace shardlens::session
