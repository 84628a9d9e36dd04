#include "json_schema.hpp"

#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>

namespace perfgap::fixture {
namespace {

using json = nlohmann::json;

const std::set<std::string>& known_keywords() {
  static const std::set<std::string> k{"$schema", "$id", "title", "description", "$defs", "$ref", "type", "const", "enum",
                                       "required", "properties", "additionalProperties", "items", "oneOf", "pattern",
                                       "minLength", "minimum"};
  return k;
}

bool has_type(const json& v, const std::string& t) {
  if (t == "null") return v.is_null();
  if (t == "boolean") return v.is_boolean();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer") return v.is_number_integer() || (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
  throw std::invalid_argument("unknown type " + t);
}

// JSON Pointer escapes for property names in paths.
std::string child(const std::string& path, const std::string& key) { return path + "/" + key; }

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void validate(const json& s, const json& v, const std::string& path, std::vector<std::string>& out) const {
    if (s.is_boolean()) {
      if (!s.get<bool>()) out.push_back(path + ": not allowed here");
      return;
    }
    if (!s.is_object()) {
      out.push_back(path + ": schema is neither an object nor a boolean");
      return;
    }
    for (const auto& [k, _] : s.items())
      if (!known_keywords().count(k)) out.push_back(path + ": schema keyword " + k + " is not implemented by tests/support/json_schema.cpp");
    if (s.contains("$ref")) {
      const auto ref = s["$ref"].get<std::string>();
      if (ref.rfind("#/", 0) != 0) {
        out.push_back(path + ": only local $ref is implemented: " + ref);
        return;
      }
      validate(root_.at(json::json_pointer(ref.substr(1))), v, path, out);
    }
    if (s.contains("type")) {
      bool ok = false;
      if (s["type"].is_string()) ok = has_type(v, s["type"].get<std::string>());
      else for (const auto& t : s["type"]) ok = ok || has_type(v, t.get<std::string>());
      if (!ok) {
        out.push_back(path + ": is " + std::string(v.type_name()) + ", schema wants " + s["type"].dump());
        return;
      }
    }
    if (s.contains("const") && v != s["const"]) out.push_back(path + ": is " + v.dump() + ", must be " + s["const"].dump());
    if (s.contains("enum")) {
      bool found = false;
      for (const auto& e : s["enum"]) found = found || e == v;
      if (!found) out.push_back(path + ": " + v.dump() + " is not one of " + s["enum"].dump());
    }
    if (s.contains("oneOf")) {
      int matched = 0;
      for (const auto& alt : s["oneOf"]) {
        std::vector<std::string> sub;
        validate(alt, v, path, sub);
        if (sub.empty()) ++matched;
      }
      if (matched != 1) out.push_back(path + ": matches " + std::to_string(matched) + " of the oneOf alternatives, must match one");
    }
    if (v.is_string()) {
      const auto str = v.get<std::string>();
      if (s.contains("minLength") && str.size() < s["minLength"].get<std::size_t>()) out.push_back(path + ": shorter than " + s["minLength"].dump());
      if (s.contains("pattern") && !std::regex_search(str, std::regex(s["pattern"].get<std::string>(), std::regex::ECMAScript)))
        out.push_back(path + ": " + v.dump() + " does not match " + s["pattern"].dump());
    }
    if (v.is_number() && s.contains("minimum") && v.get<double>() < s["minimum"].get<double>())
      out.push_back(path + ": below the minimum " + s["minimum"].dump());
    if (v.is_array() && s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i) validate(s["items"], v[i], child(path, std::to_string(i)), out);
    if (v.is_object()) {
      if (s.contains("required"))
        for (const auto& r : s["required"])
          if (!v.contains(r.get<std::string>())) out.push_back(path + ": required property " + r.get<std::string>() + " is missing");
      for (const auto& [k, x] : v.items()) {
        if (s.contains("properties") && s["properties"].contains(k)) validate(s["properties"][k], x, child(path, k), out);
        else if (s.contains("additionalProperties")) validate(s["additionalProperties"], x, child(path, k), out);
      }
    }
  }

 private:
  const json& root_;
};

}  // namespace

std::vector<std::string> schema_violations(const json& schema, const json& doc) {
  std::vector<std::string> out;
  Validator(schema).validate(schema, doc, "", out);
  return out;
}

const json& report_schema() {
  static const json schema = [] {
    const std::string path = std::string(PERFGAP_SOURCE_DIR) + "/docs/report.schema.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return json::parse(in);
  }();
  return schema;
}

}  // namespace perfgap::fixture
