// Runs every leaf of the command table in-process, as a user types it, and holds it to the
// parts of docs/cli.md that only running shows: an error names the command line that was
// parsed, `help WORDS` is `WORDS --help`, a global flag before the command is named as such,
// every input path the user names is checked before anything runs (under TRAINRIG_PARSE_ONLY=1
// too), --json and --format are not both taken, the options only some commands take are the
// ones docs/cli.md lists, and one option name is one option (its synonyms, its environment twin).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli_leaves.h"
#include "data/shards/shard_writer.h"

namespace trainrig {
namespace {

namespace fs = std::filesystem;
using test::Leaf;
using test::options_of;

struct Ran {
    int rc = -1;
    std::string out, err;
};

// `trainrig WORDS...` in this process; TRAINRIG_PARSE_ONLY=1 when `parse_only`.
Ran run(const std::vector<std::string>& words, bool parse_only = false) {
    std::vector<const char*> argv = {"trainrig"};
    for (const auto& w : words) argv.push_back(w.c_str());
    if (parse_only) ::setenv("TRAINRIG_PARSE_ONLY", "1", 1);
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    Ran r;
    r.rc = run_cli(static_cast<int>(argv.size()), argv.data());
    r.out = testing::internal::GetCapturedStdout();
    r.err = testing::internal::GetCapturedStderr();
    ::unsetenv("TRAINRIG_PARSE_ONLY");
    return r;
}

// "trainrig tune show" -> {"tune", "show"}
std::vector<std::string> words_of(const std::string& path) {
    std::vector<std::string> out;
    std::istringstream in(path.substr(std::string("trainrig ").size()));
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

const char* kProbe = "/nonexistent/trainrig-probe";

// CLI11 lists an option's "Excludes:" in the order of the options' addresses: sorted, two helps
// of one command read the same.
std::string sorted_excludes(const std::string& help) {
    std::istringstream in(help);
    std::string out;
    for (std::string l; std::getline(in, l);) {
        if (const size_t at = l.find(" Excludes: "); at != std::string::npos) {
            std::istringstream names(l.substr(at + 11));
            std::vector<std::string> v;
            for (std::string n; names >> n;) v.push_back(n);
            std::sort(v.begin(), v.end());
            l.resize(at + 11);
            for (const auto& n : v) l += n + " ";
        }
        out += l + "\n";
    }
    return out;
}

class CliLeaf : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("cli-leaf-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        // A real token dataset, for the leaves whose other inputs are checked after --data.
        auto w = data::make_llmc_writer((dir_ / "tok").string(), 256, 4096);
        ASSERT_TRUE(w.ok());
        std::vector<uint32_t> ids(2048, 7);
        ASSERT_TRUE((*w)->add_document(ids).ok());
        ASSERT_TRUE((*w)->commit().ok());
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }

    // What a leaf needs besides the option probed, so that only the probe can be wrong:
    // option -> value ("" as the key: positionals, in order).
    std::map<std::string, std::vector<std::string>> needs(const std::string& path) const {
        const std::string tok = (dir_ / "tok").string(), file = "/etc/hostname";
        if (path == "trainrig bench run") return {{"", {"cpu-mem"}}};
        if (path == "trainrig data tokenize")
            return {{"--input", {file}},
                    {"--tokenizer", {"gpt2"}},
                    {"--output-prefix", {(dir_ / "out").string()}}};
        if (path == "trainrig data inspect" || path == "trainrig data verify") return {{"", {tok}}};
        if (path == "trainrig train") return {{"--data", {tok}}, {"--steps", {"1"}}};
        if (path == "trainrig watch report") return {{"--db", {file}}};
        if (path == "trainrig report" || path == "trainrig report verify") return {{"", {file}}};
        if (path == "trainrig report diff") return {{"", {file, file}}};
        if (path == "trainrig fleet judge") return {{"", {file}}};
        return {};
    }
    // The leaf's words with its needs, `option` (a name, or a positional's) given `value`.
    std::vector<std::string> line(const Leaf& l, const CLI::Option* option,
                                  const std::string& value) const {
        auto need = needs(l.path);
        std::vector<std::string> positionals = need[""];
        size_t at = 0;
        for (const auto* o : options_of(l.app)) {
            if (o->nonpositional()) continue;
            if (o == option) {
                if (at < positionals.size())
                    positionals[at] = value;
                else
                    positionals.push_back(value);
            }
            ++at;
        }
        std::vector<std::string> words;
        for (const auto& [name, values] : need) {
            if (name.empty() || (option && option->check_name(name))) continue;
            words.push_back(name);
            words.insert(words.end(), values.begin(), values.end());
        }
        if (option && option->nonpositional()) {
            words.push_back(option->get_name());
            words.push_back(value);
        }
        // Positionals first: an option that takes several values would take them too.
        auto line = words_of(l.path);
        line.insert(line.end(), positionals.begin(), positionals.end());
        line.insert(line.end(), words.begin(), words.end());
        return line;
    }

    test::CommandTable table_;
    static fs::path dir_;
};
fs::path CliLeaf::dir_;

TEST_F(CliLeaf, AnErrorNamesTheCommandLineParsed) {
    for (const auto& l : table_.leaves()) {
        auto words = line(l, nullptr, "");
        words.push_back("--no-such-flag");
        const Ran r = run(words);
        EXPECT_EQ(r.rc, 2) << l.path;
        EXPECT_TRUE(r.err.starts_with(l.path + ": ")) << l.path << ": " << r.err;
        EXPECT_NE(r.err.find("`" + l.path + " --help`"), std::string::npos) << r.err;
    }
}

TEST_F(CliLeaf, HelpWordsIsTheLeafsOwnHelp) {
    for (const auto& l : table_.leaves()) {
        auto words = words_of(l.path);
        words.push_back("--help");
        const Ran own = run(words);
        words.pop_back();
        words.insert(words.begin(), "help");
        const Ran asked = run(words);
        EXPECT_EQ(asked.rc, 0) << l.path << ": " << asked.err;
        EXPECT_EQ(sorted_excludes(asked.out), sorted_excludes(own.out)) << l.path;
        EXPECT_NE(own.out.find("Usage: " + l.path + " "), std::string::npos) << own.out;
    }
    const Ran none = run({"help", "tune", "nosuch"});
    EXPECT_EQ(none.rc, 2);
    EXPECT_NE(none.err.find("no command named 'tune nosuch'"), std::string::npos) << none.err;
}

TEST_F(CliLeaf, AFlagBeforeTheCommandIsNamedAsTheUsersNotTheCommands) {
    for (const auto& l : table_.leaves()) {
        auto words = words_of(l.path);
        words.insert(words.begin(), "-v");
        const Ran r = run(words);
        EXPECT_EQ(r.rc, 2) << l.path;
        EXPECT_TRUE(r.err.starts_with("trainrig: -v is not an option of trainrig itself"))
            << l.path << ": " << r.err;
    }
    // The global flags themselves stay where they are.
    EXPECT_EQ(run({"--no-color", "plan", "--list"}).rc, 0);
}

// Every option that names something to read (its type FILE, DIR, PATH, REPORT, OLD, NEW or
// PREFIX), given a path that does not exist, stops the line with exit 2 and the path named, on a
// real run and under TRAINRIG_PARSE_ONLY=1 alike. Outputs and programs are listed apart.
TEST_F(CliLeaf, EveryInputPathIsCheckedBeforeAnythingRuns) {
    const std::set<std::string> writes = {
        "trainrig validate --report", "trainrig validate --fleet-report",
        "trainrig fleet judge --out", "trainrig data tokenize --output-prefix",
        "trainrig train --ckpt-dir",  "trainrig train --log",
        "trainrig watch --textfile",  "trainrig watch --db",
        "trainrig stack --lock",      "trainrig slurm healthcheck --scontrol",
        // A folder on the machine judged (under --root): the run judges it (storage.data-dir),
        // a fact of the machine as its GPUs are.
        "trainrig doctor --data-dir", "trainrig collect --data-dir",
        "trainrig validate --data-dir"};
    // The type as the help shows it: "FILE", "PREFIX ...", "FILE:FILE" (with a validator's).
    const std::regex input_type("(FILE|DIR|PATH|REPORT|OLD|NEW|PREFIX)(:[A-Z]+)?( \\.\\.\\.)?");
    // A name that says "a path" must carry a path type, so that this test sees it.
    const std::regex path_name(
        "--(.*-)?(file|dir|data|path|prefix|config|report|snapshot|lock|db|baseline|catalog|"
        "rules|overrides|init-from|pairs|out|root|input|shards)");
    size_t probed = 0;
    for (const auto& l : table_.leaves())
        for (const auto* o : options_of(l.app)) {
            const std::string name = o->get_name();
            if (o->get_expected_min() == 0 || name == "--output" || name == "--help") continue;
            if (std::regex_match(name, path_name)) {
                EXPECT_TRUE(std::regex_match(o->get_type_name(), input_type))
                    << l.path << " " << name << " is typed " << o->get_type_name();
            }
            if (!std::regex_match(o->get_type_name(), input_type) ||
                writes.count(l.path + " " + name))
                continue;
            ++probed;
            for (bool parse_only : {true, false}) {
                const Ran r = run(line(l, o, kProbe), parse_only);
                EXPECT_EQ(r.rc, 2) << l.path << " " << name << (parse_only ? " (parse only)" : "")
                                   << ": " << r.out.substr(0, 300) << r.err;
                EXPECT_NE(r.err.find(kProbe), std::string::npos)
                    << l.path << " " << name << ": " << r.err;
                EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
            }
        }
    EXPECT_GE(probed, 40u);
}

// What the bug report met under TRAINRIG_PARSE_ONLY=1: each line the real run refuses is
// refused by the check alone, in the same words.
TEST_F(CliLeaf, ParseOnlyRefusesWhatARunRefuses) {
    const std::vector<std::vector<std::string>> lines = {
        {"plan", "--model", "nosuch"},
        {"plan", "--model", "llama2-7b", "--tokens", "0"},
        {"doctor", "--only", "nosuch.check"},
        {"tune", "show", "--only", "nosuch"},
        {"train", "--data", (dir_ / "tok").string(), "--steps", "2", "--warmup", "50"},
        {"train", "--data", (dir_ / "tok").string(), "--steps", "2", "--resume", "--ckpt-dir",
         (dir_ / "typo").string()},
        {"validate", "--skip", "nosuch-stage"},
        {"bench", "run", "nosuch"},
        {"data", "tokenize", "--input", "/etc/hostname", "--tokenizer", "nosuch", "--output-prefix",
         (dir_ / "out").string()},
    };
    for (const auto& words : lines) {
        const Ran checked = run(words, true);
        const Ran ran = run(words);
        std::string shown;
        for (const auto& w : words) shown += w + " ";
        EXPECT_EQ(checked.rc, 2) << shown << checked.err;
        EXPECT_EQ(ran.rc, 2) << shown << ran.err;
        EXPECT_EQ(checked.err, ran.err) << shown;
    }
    EXPECT_FALSE(fs::exists(dir_ / "typo"));  // --resume did not create the folder it named
    ::setenv("TRAINRIG_PARSE_ONLY", "yes", 1);
    testing::internal::CaptureStderr();
    const char* argv[] = {"trainrig", "plan", "--list"};
    EXPECT_EQ(run_cli(3, argv), 2);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("TRAINRIG_PARSE_ONLY=yes"),
              std::string::npos);
    ::unsetenv("TRAINRIG_PARSE_ONLY");
}

// --json is --format json: a leaf with both takes one of them.
TEST_F(CliLeaf, JsonAndFormatAreNotBothTaken) {
    size_t both = 0;
    for (const auto& l : table_.leaves()) {
        const auto opts = options_of(l.app);
        bool json = false, format = false;
        for (const auto* o : opts) {
            json = json || o->get_name() == "--json";
            format = format || o->get_name() == "--format";
        }
        if (!json || !format) continue;
        ++both;
        auto words = line(l, nullptr, "");
        words.insert(words.end(), {"--json", "--format", "md"});
        EXPECT_EQ(run(words, true).rc, 2) << l.path;
    }
    EXPECT_EQ(both, 2u);  // doctor, report
}

// docs/cli.md lists which commands take the options only some commands take; an option a
// command would ignore is not declared on it.
TEST_F(CliLeaf, TheOptionsOnlySomeCommandsTakeAreTheOnesDocumented) {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/docs/cli.md");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    const std::regex row(R"(\n\| `(--[a-z-]+)` \| ((?:`[a-z ]+`(?:, )?)+) \|)");
    std::map<std::string, std::set<std::string>> documented;
    for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) {
        const std::string cells = (*it)[2];
        const std::regex cell("`([a-z ]+)`");
        for (std::sregex_iterator c(cells.begin(), cells.end(), cell); c != end; ++c)
            documented[(*it)[1]].insert("trainrig " + (*c)[1].str());
    }
    ASSERT_EQ(documented.size(), 3u) << "docs/cli.md has no table of --data-dir, --env-file and "
                                        "--import-torch";
    for (const auto& [option, leaves] : documented) {
        std::set<std::string> declared;
        for (const auto& l : table_.leaves())
            for (const auto* o : options_of(l.app))
                if (o->get_name() == option) declared.insert(l.path);
        EXPECT_EQ(declared, leaves) << option;
    }
}

// One option name is one option: a synonym is the same option (plan --hidden, train --dim), an
// environment twin names one option everywhere it is declared, ranges read as numbers people
// type, a leaf that takes --html or --md takes --format, and --out says what -o is.
TEST_F(CliLeaf, OneNameOneOption) {
    const std::vector<std::pair<std::string, std::string>> synonyms = {
        {"--hidden", "--dim"}, {"--micro-batch", "--batch"}};
    std::map<std::string, std::map<std::string, std::string>> twins;  // name -> env -> leaf
    for (const auto& l : table_.leaves()) {
        if (l.path == "trainrig plan" || l.path == "trainrig train") {
            for (const auto& [a, b] : synonyms) {
                EXPECT_EQ(l.app->get_option_no_throw(a), l.app->get_option_no_throw(b))
                    << l.path << " " << a << " " << b;
            }
        }
        for (const auto* o : options_of(l.app)) {
            // launch runs on this machine: TRAINRIG_ROOT, set for a doctor of a machine tree,
            // must not make it refuse to run a job (docs/cli.md).
            if (l.path == "trainrig launch" && o->get_name() == "--root") continue;
            // bench measures this host's disk; TRAINRIG_DATA_DIR names a folder of the machine
            // doctor judges, which under --root is inside a tree (docs/cli.md).
            if (l.path == "trainrig bench run" && o->get_name() == "--data-dir") continue;
            twins[o->get_name()][o->get_envname()] = l.path;
        }
        const std::string help = l.app->help();
        // A limit of ten digits reads as noise ([1 - 4294967296]): give it in words, or round.
        EXPECT_FALSE(std::regex_search(help, std::regex(R"(\[\d+ - \d{10,}\])"))) << l.path;
        if (l.app->get_option_no_throw("--html") || l.app->get_option_no_throw("--md")) {
            EXPECT_NE(l.app->get_option_no_throw("--format"), nullptr) << l.path;
        }
        if (const auto* out = l.app->get_option_no_throw("--out")) {
            EXPECT_NE(out->get_description().find("-o/--output"), std::string::npos) << l.path;
        }
    }
    for (const auto& [name, envs] : twins) {
        if (name == "--report") continue;  // validate writes a report where the checks read one
        EXPECT_EQ(envs.size(), 1u)
            << name << " has another environment twin on some command: " << envs.begin()->second
            << " vs " << envs.rbegin()->second;
    }
}

}  // namespace
}  // namespace trainrig
