#include "snapshot/take.hpp"

#include "sys/root_content.hpp"
#include "sys/sysroot.hpp"

namespace perfgap::snapshot {

tl::expected<std::unique_ptr<ReplayRoot>, std::string> open_checked_root(const std::string& path) {
  auto tree = ReplayRoot::open(path);
  if (!tree) return tl::unexpected(tree.error());
  if (auto ok = sys::check_tree_content((*tree)->root(), path); !ok) return tl::unexpected(ok.error());
  return std::move(*tree);
}

tl::expected<Taken, std::string> take(const TakeRequest& rq) {
  std::unique_ptr<ReplayRoot> tree;
  auto source = sys::Sysroot::live();
  if (!rq.root.empty()) {
    auto r = open_checked_root(rq.root);
    if (!r) return tl::unexpected("--root " + r.error());
    tree = std::move(*r);
    source = tree->root();
  }
  Options opts;
  opts.pids = rq.pids;
  opts.nvml = rq.nvml;
  Taken taken;
  taken.capture = capture(source, opts);
  if (tree) taken.capture.source_root = rq.root;  // the tree as the user named it, not its unpacked copy
  // The unpacked copy is not needed past the capture: removed now, and a signal that came
  // meanwhile ends the process here, before OUT is written.
  tree.reset();
  taken.manifest = manifest_json(taken.capture, PERFGAP_VERSION);
  auto written = names_archive(rq.out) ? write_tar_gz(taken.capture, taken.manifest, rq.out)
                                       : write_directory(taken.capture, taken.manifest, rq.out);
  if (!written) return tl::unexpected(written.error());
  return taken;
}

}  // namespace perfgap::snapshot
