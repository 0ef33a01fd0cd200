// The test vectors kept in tests/data/ (test_data_dir(), set by tests/CMakeLists.txt), and
// the check that a data-driven suite runs every vector of its files. gtest_discover_tests
// registers nothing for an empty parameter list, so a suite whose file went missing would
// otherwise report zero tests and pass: each suite has a plain TEST beside it that loads the
// files itself and fails, naming the file, unless every vector reached a registered test.
#pragma once

#include "test_paths.h"
#include "test_support.h"

#include <set>
#include <string>
#include <vector>

namespace deconv_test {

inline std::string data_path(const std::string &rel) {
    return std::string(test_data_dir()) + "/" + rel;
}

// The "cases" array of a vector file, or an empty one and `error` naming the file.
struct VectorFile {
    std::string path;
    json cases = json::array();
    std::string error;
};

inline VectorFile load_vectors(const std::string &rel) {
    VectorFile f;
    f.path = data_path(rel);
    const json doc = load_json(f.path, &f.error);
    if (!f.error.empty()) return f;
    if (!doc.is_object() || !doc.contains("cases") || !doc.at("cases").is_array()) {
        f.error = f.path + ": no \"cases\" array";
    } else if (doc.at("cases").empty()) {
        f.error = f.path + ": \"cases\" is empty";
    } else if (doc.contains("counts") && doc.at("counts").contains("static_cases") &&
               doc.at("counts").at("static_cases") != doc.at("cases").size()) {
        // A file that states its own count (shape_inference.json) must hold that many cases: a
        // truncated or hand-trimmed copy fails here.
        f.error = f.path + ": \"counts\".\"static_cases\" is " +
                  doc.at("counts").at("static_cases").dump() + " but \"cases\" holds " +
                  std::to_string(doc.at("cases").size());
    } else {
        f.cases = doc.at("cases");
    }
    return f;
}

// How many tests the value-parameterized suite `suite` ("OpenVino/Conformance") registered,
// whatever --gtest_filter runs.
inline int registered_tests(const std::string &suite) {
    const ::testing::UnitTest &u = *::testing::UnitTest::GetInstance();
    for (int i = 0; i < u.total_test_suite_count(); i++)
        if (suite == u.GetTestSuite(i)->name()) return u.GetTestSuite(i)->total_test_count();
    return 0;
}

// The count check: every file of `files` loads, each of its vectors (by "name") is among
// `covered`, the vector names the suite's parameter list holds, and the suite registered one
// test per parameter (`params`).
inline void expect_every_vector_runs(const std::string &suite, const std::vector<std::string> &files,
                                     const std::set<std::string> &covered, size_t params) {
    size_t vectors = 0;
    for (const std::string &rel : files) {
        const VectorFile f = load_vectors(rel);
        EXPECT_TRUE(f.error.empty()) << f.error;
        for (const json &c : f.cases) {
            vectors++;
            const std::string name = c.value("name", "");
            EXPECT_TRUE(covered.count(name))
                << f.path << ": vector '" << name << "' reaches no test of " << suite;
        }
    }
    EXPECT_GT(vectors, 0u) << suite << ": its files hold no vectors";
    EXPECT_EQ(covered.size(), vectors) << suite << ": its parameter list names vectors the files lack";
    EXPECT_EQ(static_cast<size_t>(registered_tests(suite)), params)
        << suite << ": registered tests vs parameters";
    std::cout << "[ vectors  ] " << suite << ": " << vectors << " vectors, " << params
              << " tests\n";
}

}  // namespace deconv_test
