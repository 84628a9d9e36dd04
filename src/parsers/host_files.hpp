// Host and container configuration text the runtime facts read: /etc/passwd, podman's
// /run/.containerenv, enroot's environ.d / mounts.d lines and Slurm plugstack files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgap::parsers {

// The home directory (6th field) of the first /etc/passwd line whose uid (3rd field) is `uid`.
std::optional<std::string> passwd_home(std::string_view passwd, std::string_view uid);

// The engine= line of podman's /run/.containerenv ("" when it names none; the last one wins).
std::string containerenv_engine(std::string_view text);

// A configuration file's lines that are neither empty nor '#' comments, trimmed, with their
// 1-based line numbers (enroot environ.d / mounts.d files, plugstack.conf).
std::vector<std::pair<int, std::string>> config_lines(std::string_view text);

// An enroot environ.d line "NAME=VALUE", "export NAME=VALUE" or "NAME" (pass the host value):
// the name, or "" for other lines.
std::string enroot_environ_name(std::string_view line);
// Whether an enroot fstab line ("SRC DST TYPE OPTS", DST inside the container) makes host
// `path` appear at the same path in the container (it or a directory above it, bind-mounted
// at the same place).
bool enroot_mount_carries(std::string_view line, std::string_view path);

}  // namespace perfgap::parsers
