#include "report/redact.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace perfgap::report {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}


// An option or key name inside a value ("--api-key", "password", "x-auth-token") by the
// variable-name rule, '-' read as '_'.
bool secret_key(std::string_view key) {
  while (!key.empty() && key.front() == '-') key.remove_prefix(1);
  if (key.empty()) return false;
  std::string name(key);
  for (auto& c : name)
    if (c == '-' || c == '.') c = '_';
  return secret_name(name);
}

// A report status word ("fixed: fail -> pass: TITLE", evidence "pass: TITLE"): what perfgap
// itself writes before a colon, never a credential header, whatever the name rule says of PASS.
bool status_word(std::string_view key) {
  const std::string u = upper(key);
  return u == "PASS" || u == "FAIL" || u == "WARN" || u == "SKIP" || u == "ERROR";
}

// A header's name is made of name characters: "(XID_NAME_KEY_ROTATION):" in a sentence is not one.
bool header_name(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool is_sep(char c) { return std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';' || c == '&' || c == '?' || c == '\'' || c == '"'; }

constexpr std::size_t npos = std::string_view::npos;

// scheme://user:password@host: a password in a URL's authority (where the authority starts).
std::size_t url_with_password(std::string_view v) {
  for (std::size_t pos = v.find("://"); pos != npos; pos = v.find("://", pos + 3)) {
    std::size_t start = pos + 3;
    std::size_t end = start;
    while (end < v.size() && v[end] != '/' && v[end] != '?' && v[end] != '#' && !std::isspace(static_cast<unsigned char>(v[end]))) ++end;
    auto authority = v.substr(start, end - start);
    auto at = authority.rfind('@');
    if (at != npos && authority.substr(0, at).find(':') != npos) return start;
  }
  return npos;
}

// "Bearer TOKEN", "Basic BASE64", "token TOKEN" (HTTP Authorization schemes): where the credential starts.
std::size_t auth_scheme(std::string_view v) {
  const std::string u = upper(v);
  std::size_t first = npos;
  for (std::string_view scheme : {"BEARER", "BASIC", "DIGEST", "NEGOTIATE"}) {
    for (std::size_t pos = u.find(scheme); pos != std::string::npos; pos = u.find(scheme, pos + 1)) {
      if (pos > 0 && std::isalnum(static_cast<unsigned char>(u[pos - 1]))) continue;
      std::size_t i = pos + scheme.size();
      if (i >= u.size() || !std::isspace(static_cast<unsigned char>(u[i]))) continue;
      while (i < u.size() && std::isspace(static_cast<unsigned char>(u[i]))) ++i;
      std::size_t n = 0;
      while (i + n < u.size() && !std::isspace(static_cast<unsigned char>(u[i + n]))) ++n;
      // "basic mode" is prose; a credential is one word of token characters.
      if (n >= (scheme == "BEARER" ? 1u : 8u)) {
        first = std::min(first, i);
        break;
      }
    }
  }
  return first;
}

// Where the first credential of a value or a text starts (npos: none).
std::size_t secret_at(std::string_view v) {
  std::size_t first = std::min(url_with_password(v), auth_scheme(v));
  if (auto a = upper(v).find("AUTHORIZATION:"); a != std::string::npos) first = std::min(first, a + 14);
  // Words of the value: "--password=x", "password=x", "?token=x&", "--token x", "NAME=--token=x".
  std::size_t i = 0;
  while (i < v.size() && i < first) {
    while (i < v.size() && is_sep(v[i])) ++i;
    std::size_t j = i;
    while (j < v.size() && !is_sep(v[j])) ++j;
    const std::size_t word_at = i;
    auto word = v.substr(i, j - i);
    i = j;
    if (word.empty()) continue;
    if (auto last_eq = word.rfind('='); last_eq != npos) {
      // Every key of the word: what precedes each '=' back to the previous one.
      std::size_t key_start = 0;
      for (std::size_t eq = word.find('='); eq != npos; key_start = eq + 1, eq = word.find('=', eq + 1))
        if (secret_key(word.substr(key_start, eq - key_start)) && eq + 1 < word.size()) {
          first = std::min(first, word_at + eq + 1);
          break;
        }
      // "NAME=--token abc": an option after the last '=' takes the next word.
      word.remove_prefix(last_eq + 1);
    }
    if (word.empty()) continue;
    const auto colon = word.find(':');
    if (colon != npos && colon + 1 == word.size()) {
      const auto key = word.substr(0, colon);
      if (header_name(key) && secret_key(key) && !status_word(key)) {  // "X-Auth-Token: abc", not "pass: TITLE"
        std::size_t k = i;
        while (k < v.size() && is_sep(v[k])) ++k;
        if (k < v.size()) first = std::min(first, k);
      }
    } else if (word.front() == '-' && secret_key(word)) {
      std::size_t k = i;
      while (k < v.size() && std::isspace(static_cast<unsigned char>(v[k]))) ++k;
      if (k < v.size() && v[k] != '-') first = std::min(first, k);  // "--token abc", not "--token --next"
    }
  }
  return first;
}

}  // namespace

bool audited_name(std::string_view name) {
  for (std::string_view p : {"NCCL_", "UCX_", "CUDA_", "NVIDIA_", "OMPI_", "PMIX_", "SLURM_", "TORCH_", "NVTE_", "MEGATRON_"})
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

bool secret_name(std::string_view name) {
  const std::string u = upper(name);
  for (std::string_view s : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "AUTHORIZATION"})
    if (u.find(s) != std::string::npos) return true;
  // GITHUB_PAT, SSHPASS, MYSQL_PASS, NPM_AUTH, AUTH (not ..._BYPASS).
  if (ends_with(u, "_PAT") || u == "PAT" || (ends_with(u, "PASS") && !ends_with(u, "BYPASS")) || ends_with(u, "AUTH")) return true;
  std::size_t start = 0;
  while (start <= u.size()) {
    auto end = u.find('_', start);
    if (end == std::string::npos) end = u.size();
    std::string_view word(u.data() + start, end - start);
    if (word == "KEY" || word == "APIKEY") return true;
    start = end + 1;
  }
  return false;
}

bool secret_value(std::string_view v) { return secret_at(v) != npos; }

std::string redact_text(std::string_view text) {
  auto at = secret_at(text);
  if (at == npos) return std::string(text);
  std::string out(text.substr(0, at));
  out += kRedacted;
  return out;
}

void redact_finding(Finding& f) {
  auto clean = [](std::string& s) {
    if (secret_at(s) != npos) s = redact_text(s);
  };
  clean(f.title);
  for (auto& e : f.evidence) {
    clean(e.observed);
    if (e.expected) clean(*e.expected);
  }
  for (auto& row : f.table)
    for (auto& cell : row) clean(cell);
}

std::string redact(std::string_view name, std::string_view value) {
  if (secret_name(name) || secret_value(value)) return std::string(kRedacted);
  return std::string(value);
}

StringMap audited_environment(const parsers::EnvList& env) {
  StringMap out;
  for (const auto& [k, v] : env) {
    if (!audited_name(k)) continue;
    out[k] = redact(k, v);
  }
  return out;
}

std::string redact_environ(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\0', start);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = text.size();
    auto entry = text.substr(start, end - start);
    // An entry without '=' has no value to hide; "=x" has an empty name, judged by its value.
    auto eq = entry.find('=');
    if (eq != std::string_view::npos) {
      out.append(entry.substr(0, eq + 1));
      out.append(redact(entry.substr(0, eq), entry.substr(eq + 1)));
    } else {
      out.append(entry);
    }
    if (terminated) out.push_back('\0');
    start = end + 1;
  }
  return out;
}

}  // namespace perfgap::report
