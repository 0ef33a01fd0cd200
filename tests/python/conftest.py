"""pytest setup of the Python suites: makes `deconv` importable when the suites are run by hand
(CTest sets PYTHONPATH=<build>/python; by hand, DECONV_BUILD_DIR or ../../build is used)."""

import reference

reference.import_deconv()
