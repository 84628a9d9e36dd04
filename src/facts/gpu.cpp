#include "facts/gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "sys/process.hpp"
#include "sys/executable.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {
namespace {

constexpr std::size_t kMaxDocumentBytes = 16u << 20;
constexpr std::string_view kNotStarted = "perfgap-gpu could not be started: ";

// The first line of what the helper said on stderr, bounded, for a skip title.
std::string first_line(const std::string& text) {
  auto line = sys::trim_ws(std::string_view(text).substr(0, text.find('\n')));
  return std::string(line.substr(0, 200));
}

Avail<NvmlSample> run_helper(const std::string& helper, bool nvml, int deadline_s, std::string source) {
  std::vector<std::string> argv = {helper, "--deadline", std::to_string(deadline_s)};
  if (nvml) argv.emplace_back("--nvml");
  sys::CommandOptions o;
  // The helper stops itself at its deadline (exit 5); this bound is for a helper that cannot.
  o.timeout = std::chrono::seconds(deadline_s + 1);
  auto r = sys::run_command(argv, o);
  if (!r.started) return missing(std::string(kNotStarted) + r.error);
  if (r.timed_out) return missing(fmt::format("perfgap-gpu did not finish within {} s and was stopped", deadline_s + 1));
  const std::string said = first_line(r.err);
  auto with = [&](const std::string& what) { return said.empty() ? what : what + " (" + said + ")"; };
  switch (r.status) {
    case 0: break;
    case 3: return missing(with("no NVIDIA driver library (libnvidia-ml.so.1)"));
    case 4: return missing(with("NVML did not initialise"));
    case 5: return missing(fmt::format("NVML did not answer within {} s (perfgap-gpu --deadline)", deadline_s));
    default: return missing(with(fmt::format("perfgap-gpu exited with status {}", r.status)));
  }
  auto doc = parsers::parse_nvml_json(r.out);
  if (!doc) return missing("perfgap-gpu printed a document perfgap cannot read: " + doc.error().describe());
  return NvmlSample{std::move(r.out), std::move(*doc), std::move(source)};
}

bool any_gpu_queried(const parsers::NvmlHelperOutput& d) { return d.snapshot.gpus.size() > d.skipped.size(); }

Avail<NvmlSamples> run_live(const Facts& f) {
  const auto& choice = gpu_helpers();
  if (choice.candidates.empty()) return missing(choice.why);
  // Two runs, each its deadline plus a second's slack, and the gap between them, within the
  // budget less a second for the rest of the check; one run when two do not fit.
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  const auto spare = f.options().gpu_helper_budget - std::chrono::milliseconds(1000);
  const auto two = duration_cast<seconds>((spare - kNvmlSampleGap) / 2).count() - 1;
  const auto one = duration_cast<seconds>(spare).count() - 1;
  const bool both = two >= 1;
  const int deadline = static_cast<int>(std::min<long long>(kNvmlMaxDeadlineS, both ? two : one));
  if (deadline < 1)
    return missing(fmt::format("the check's budget ({} ms) is too short to run perfgap-gpu", f.options().gpu_helper_budget.count()));
  // The embedded copy first; the installed one when the embedded one could not be started
  // (an exec policy refusing memory-backed programs), saying so.
  std::string passed_over = choice.why;
  const GpuHelperCandidate* helper = nullptr;
  Avail<NvmlSample> first = missing("");
  for (const auto& c : choice.candidates) {
    helper = &c;
    first = run_helper(c.path, f.options().nvml, deadline, "perfgap-gpu (" + c.how + ") run 1");
    if (first || !sys::starts_with(first.error(), kNotStarted)) break;
    passed_over += (passed_over.empty() ? "" : "; ") + c.how + ": " + first.error();
  }
  if (!first) return missing(first.error() + (passed_over.empty() || passed_over == first.error() ? "" : " [" + passed_over + "]"));
  if (!passed_over.empty()) first->source += " [" + passed_over + "]";
  NvmlSamples s;
  s.first = std::move(*first);
  s.deadline_s = deadline;
  if (!both) {
    s.second_why = fmt::format("one sample: the check's budget ({} ms) leaves no time for a second run", f.options().gpu_helper_budget.count());
  } else if (!any_gpu_queried(s.first.doc)) {
    s.second_why = "one sample: no GPU was queried";
  } else {
    std::this_thread::sleep_for(kNvmlSampleGap);
    auto second = run_helper(helper->path, f.options().nvml, deadline, "perfgap-gpu (" + helper->how + ") run 2");
    if (second) s.second = std::move(*second);
    else s.second_why = "one sample: the second run failed: " + second.error();
  }
  return s;
}

Avail<NvmlSample> read_stored(const sys::Sysroot& root, const char* path) {
  auto text = root.read(path, kMaxDocumentBytes);
  if (!text) return missing(describe(text.error()));
  auto doc = parsers::parse_nvml_json(*text);
  if (!doc) return missing(fmt::format("{}: not a perfgap-gpu document: {}", path, doc.error().describe()));
  return NvmlSample{std::move(*text), std::move(*doc), path};
}

Avail<NvmlSamples> read_tree(const sys::Sysroot& root) {
  if (!root.exists(kNvmlFirstPath)) {
    if (auto why = root.read(kNvmlWhyPath, 4096); why && !sys::trim_ws(*why).empty())
      return missing(fmt::format("when the snapshot was taken: {} ({})", first_line(*why), kNvmlWhyPath));
    return missing(fmt::format("not captured (no {} in the tree: perfgap snapshot stores perfgap-gpu's document there)", kNvmlFirstPath));
  }
  auto first = read_stored(root, kNvmlFirstPath);
  if (!first) return missing(first.error());
  NvmlSamples s;
  s.first = std::move(*first);
  if (!root.exists(kNvmlSecondPath)) {
    s.second_why = fmt::format("one sample in the tree (no {})", kNvmlSecondPath);
  } else if (auto second = read_stored(root, kNvmlSecondPath)) {
    s.second = std::move(*second);
  } else {
    s.second_why = "one sample: " + second.error();
  }
  return s;
}

}  // namespace

GpuHelperChoice choose_gpu_helpers(const std::string& override_path, const std::string& override_problem,
                                   const std::string& embedded_path, const std::string& embedded_why,
                                   const std::string& beside_path, const std::string& beside_problem) {
  GpuHelperChoice c;
  if (!override_path.empty()) {
    if (override_problem.empty()) c.candidates.push_back({override_path, "PERFGAP_GPU_HELPER=" + override_path});
    else c.why = "PERFGAP_GPU_HELPER=" + override_path + ": " + override_problem;
    return c;
  }
  std::vector<std::string> why;
  if (!embedded_path.empty()) c.candidates.push_back({embedded_path, "embedded in perfgap, run from memory"});
  else if (!embedded_why.empty()) why.push_back("the copy embedded in perfgap cannot run from memory: " + embedded_why);
  if (beside_path.empty()) {
    if (c.candidates.empty()) why.emplace_back("perfgap-gpu not found: perfgap's own directory is unknown (/proc/self/exe unreadable); PERFGAP_GPU_HELPER names it");
  } else if (beside_problem.empty()) {
    c.candidates.push_back({beside_path, "beside perfgap, " + beside_path});
  } else if (c.candidates.empty()) {
    why.push_back("perfgap-gpu not installed next to perfgap (" + beside_path + ": " + beside_problem + ")" +
                  (embedded_why.empty() ? " and not embedded in this build" : ""));
  }
  for (const auto& w : why) c.why += (c.why.empty() ? "" : "; ") + w;
  return c;
}

// perfgap-gpu's bytes, assembled into the perfgap executable (src/gpu_helper/CMakeLists.txt);
// weak, so binaries built without them (the test programs) see null.
extern "C" {
extern const unsigned char perfgap_gpu_helper_image[] __attribute__((weak));      // NOLINT(readability-identifier-naming)
extern const unsigned char perfgap_gpu_helper_image_end[] __attribute__((weak));  // NOLINT(readability-identifier-naming)
}

const GpuHelperChoice& gpu_helpers() {
  static const GpuHelperChoice choice = [] {
    const char* env = std::getenv("PERFGAP_GPU_HELPER");  // NOLINT(concurrency-mt-unsafe): read-only use of the environment
    const std::string override_path = env ? env : "";
    const std::string override_problem = override_path.empty() ? "" : sys::executable_problem(override_path);
    std::string embedded_path, embedded_why;
    const unsigned char* image = perfgap_gpu_helper_image;
    const unsigned char* image_end = perfgap_gpu_helper_image_end;
    if (override_path.empty() && image != nullptr && image_end > image) {
      if (auto m = sys::memory_executable("perfgap-gpu", image, static_cast<std::size_t>(image_end - image))) embedded_path = m->path;
      else embedded_why = m.error();
    }
    std::string beside_path, beside_problem;
    if (auto dir = sys::own_executable_dir()) {
      beside_path = (*dir == "/" ? "" : *dir) + "/perfgap-gpu";
      beside_problem = sys::executable_problem(beside_path);
    }
    return choose_gpu_helpers(override_path, override_problem, embedded_path, embedded_why, beside_path, beside_problem);
  }();
  return choice;
}

std::string gpu_helper_path(bool* overridden) {
  const auto& c = gpu_helpers();
  if (overridden) *overridden = !c.candidates.empty() && sys::starts_with(c.candidates.front().how, "PERFGAP_GPU_HELPER=");
  return c.candidates.empty() ? std::string() : c.candidates.front().path;
}

const Avail<NvmlSamples>& nvml_samples(Facts& f) {
  return f.memo<Avail<NvmlSamples>>("nvml_samples", [&] { return f.root().is_live() ? run_live(f) : read_tree(f.root()); });
}

}  // namespace perfgap::facts
