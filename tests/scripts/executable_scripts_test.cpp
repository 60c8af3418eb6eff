// The README's two commands must run exactly as it writes them (`scripts/run`, `scripts/test`, no `bash`
// in front): every command of its two-command block, and every script under scripts/ and bench/ (a file
// starting with "#!"), must be committed with its run bit, and `scripts/run --help` must start.

#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace executable_scripts_test {

namespace {

namespace fs = std::filesystem;

const fs::path source_dir{ECSNET_SOURCE_DIR};

struct command_result {
    int status{-1};
    std::string output;
};

command_result run(const std::string& command) {
    command_result result;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) {
        return result;
    }
    std::array<char, 4096> buffer{};
    while (const auto n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
        result.output.append(buffer.data(), n);
    }
    const int status = pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

std::string read_file(const fs::path& path) {
    std::ifstream in{path};
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The first word of every command line in the README's "Two commands" code block.
std::set<std::string> readme_commands() {
    std::istringstream readme{read_file(source_dir / "README.md")};
    std::set<std::string> commands;
    std::string line;
    bool in_section = false;
    bool in_block = false;
    while (std::getline(readme, line)) {
        if (line.starts_with("## ")) {
            in_section = line.find("Two commands") != std::string::npos;
            continue;
        }
        if (!in_section) {
            continue;
        }
        if (line.starts_with("```")) {
            if (in_block) {
                break; // the block ended
            }
            in_block = true;
            continue;
        }
        if (in_block && !line.empty() && line.front() != '#') {
            commands.insert(line.substr(0, line.find_first_of(" \t")));
        }
    }
    return commands;
}

bool is_script(const fs::path& path) {
    std::ifstream in{path};
    std::array<char, 2> start{};
    in.read(start.data(), start.size());
    return in.gcount() == 2 && start[0] == '#' && start[1] == '!';
}

// Files under `folder` meant to be run.
std::set<std::string> scripts_in(const std::string& folder) {
    std::set<std::string> out;
    for (const auto& entry : fs::directory_iterator{source_dir / folder}) {
        if (entry.is_regular_file() && is_script(entry.path())) {
            out.insert(folder + "/" + entry.path().filename().string());
        }
    }
    return out;
}

// path -> git mode ("100755", "100644"), from the index: what a fresh clone gets.
std::map<std::string, std::string> git_modes() {
    std::map<std::string, std::string> modes;
    const auto listed = run("git -C '" + source_dir.string() + "' ls-files -s");
    if (listed.status != 0) {
        return modes;
    }
    std::istringstream lines{listed.output};
    std::string mode;
    std::string hash;
    std::string stage;
    std::string path;
    while (lines >> mode >> hash >> stage && std::getline(lines >> std::ws, path)) {
        modes[path] = mode;
    }
    return modes;
}

TEST(ExecutableScripts, TheReadmeShowsBothCommands) {
    const auto commands = readme_commands();
    EXPECT_TRUE(commands.contains("scripts/run"));
    EXPECT_TRUE(commands.contains("scripts/test"));
}

TEST(ExecutableScripts, EveryCommandAndScriptIsCommittedExecutable) {
    auto expected = readme_commands();
    expected.insert(".ci/run");
    for (const char* folder : {"scripts", "bench"}) {
        expected.merge(scripts_in(folder));
    }
    const auto modes = git_modes();
    if (modes.empty()) {
        // Not a git checkout (an exported tree): the run bits on disk are what a user gets.
        std::printf("not a git checkout: checking the run bits on disk instead of git's index\n");
        for (const auto& path : expected) {
            struct stat info {};
            ASSERT_EQ(::stat((source_dir / path).c_str(), &info), 0) << path;
            EXPECT_NE(info.st_mode & S_IXUSR, 0U) << path << " is not executable";
        }
        return;
    }
    for (const auto& path : expected) {
        const auto found = modes.find(path);
        ASSERT_NE(found, modes.end()) << path << " is not committed";
        EXPECT_EQ(found->second, "100755")
            << path << " is committed without its run bit: `git update-index --chmod=+x " << path << "`";
    }
}

TEST(ExecutableScripts, CiRunsTheTestCommandAsTheReadmeWritesIt) {
    const auto ci = read_file(source_dir / ".ci/run");
    EXPECT_NE(ci.find("exec scripts/test"), std::string::npos) << ci;
    EXPECT_EQ(ci.find("bash scripts/test"), std::string::npos) << ".ci/run must not hide a missing run bit";
}

TEST(ExecutableScripts, RunHelpStartsWithoutInstallingOrBuilding) {
    // Run as the README writes it: the path itself, which needs the run bit.
    const auto result = run("cd '" + source_dir.string() + "' && scripts/run --help");
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_NE(result.output.find("scripts/run"), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("setup: installing"), std::string::npos) << result.output;
}

} // namespace

} // namespace executable_scripts_test
