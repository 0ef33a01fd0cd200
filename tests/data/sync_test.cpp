// The repository holds its own benchmark suite (bench/layers.json) and OpenVINO vectors
// (tests/data/openvino/); new reference data arrives in shared_dir() (../shared beside the
// checkout). These tests keep the two in step: the repository's suite holds every layer of the
// shared one, field for field, and each shared vector file has an identical copy here. The
// repository's files must load in every case; only the comparison is skipped, saying so, where
// the shared folder is absent (a fresh clone).
#include "test_paths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kRepoSuite = deconv_test::repo_bench_suite();
const std::string kRepoVectors = std::string(deconv_test::test_data_dir()) + "/openvino";
const std::string kShared = deconv_test::shared_dir();

// Parses `path`; a missing or malformed file is an error naming it.
json load(const std::string &path, std::string *error) {
    std::ifstream in(path);
    if (!in) {
        *error = "cannot open " + path;
        return json();
    }
    try {
        return json::parse(in);
    } catch (const std::exception &e) {
        *error = "cannot parse " + path + ": " + e.what();
        return json();
    }
}

// The layers of a suite file by name; a layer without a name, or a name twice, is an error.
std::map<std::string, json> layers_by_name(const std::string &path, std::string *error) {
    std::map<std::string, json> out;
    const json doc = load(path, error);
    if (!error->empty()) return out;
    if (!doc.is_object() || !doc.contains("layers") || !doc.at("layers").is_array() ||
        doc.at("layers").empty()) {
        *error = path + ": no \"layers\" array, or an empty one";
        return out;
    }
    for (const json &l : doc.at("layers")) {
        const std::string name = l.is_object() ? l.value("name", "") : "";
        if (name.empty()) {
            *error = path + ": a layer without a name: " + l.dump();
            return {};
        }
        if (!out.emplace(name, l).second) {
            *error = path + ": layer '" + name + "' appears twice";
            return {};
        }
    }
    return out;
}

TEST(BenchSuite, EveryLayerNamesItsSource) {
    std::string err;
    const auto repo = layers_by_name(kRepoSuite, &err);
    ASSERT_TRUE(err.empty()) << err;
    for (const auto &[name, l] : repo)
        EXPECT_TRUE(l.contains("source") && l.at("source").is_string() &&
                    !l.at("source").get<std::string>().empty())
            << kRepoSuite << ": layer '" << name << "' has no \"source\"";
}

TEST(BenchSuite, HoldsEverySharedLayer) {
    std::string err;
    const auto repo = layers_by_name(kRepoSuite, &err);
    ASSERT_TRUE(err.empty()) << err;
    const std::string shared_path = kShared + "/bench/layers.json";
    if (!fs::exists(shared_path)) GTEST_SKIP() << shared_path << " is absent: nothing to compare";
    const auto shared = layers_by_name(shared_path, &err);
    ASSERT_TRUE(err.empty()) << err;
    for (const auto &[name, l] : shared) {
        const auto it = repo.find(name);
        if (it == repo.end()) {
            ADD_FAILURE() << kRepoSuite << " lacks layer '" << name << "' of " << shared_path
                          << " (scripts/main.sh merges it in; copy it over)";
            continue;
        }
        EXPECT_EQ(it->second, l) << "layer '" << name << "' differs:\n  " << kRepoSuite << ": "
                                 << it->second.dump() << "\n  " << shared_path << ": " << l.dump();
    }
}

TEST(OpenVinoVectors, RepositoryCopiesLoad) {
    ASSERT_TRUE(fs::is_directory(kRepoVectors)) << kRepoVectors << " is not a folder";
    int files = 0;
    for (const auto &e : fs::directory_iterator(kRepoVectors)) {
        if (e.path().extension() != ".json") continue;
        files++;
        std::string err;
        const json doc = load(e.path().string(), &err);
        EXPECT_TRUE(err.empty()) << err;
    }
    EXPECT_GT(files, 0) << kRepoVectors << " holds no .json vector files";
}

TEST(OpenVinoVectors, MatchShared) {
    const std::string shared_dir = kShared + "/conformance/openvino";
    if (!fs::is_directory(shared_dir)) GTEST_SKIP() << shared_dir << " is absent: nothing to compare";
    int compared = 0;
    for (const auto &e : fs::directory_iterator(shared_dir)) {
        if (e.path().extension() != ".json") continue;
        const std::string name = e.path().filename().string();
        const std::string mine = kRepoVectors + "/" + name;
        std::string err;
        const json repo = load(mine, &err);
        if (!err.empty()) {
            ADD_FAILURE() << err << " (the copy of " << e.path().string() << ")";
            continue;
        }
        const json shared = load(e.path().string(), &err);
        ASSERT_TRUE(err.empty()) << err;
        EXPECT_TRUE(repo == shared) << mine << " differs from " << e.path().string()
                                    << ": copy the new version over";
        compared++;
    }
    EXPECT_GT(compared, 0) << shared_dir << " holds no .json vector files";
}

}  // namespace
