// Nsight Systems SQLite exports. The export's tables exist only when they hold data, and
// columns came and went between schema versions, so every table and column is probed
// (sqlite_master, PRAGMA table_info) before a query is built from what is there.
#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "parsers/profile.hpp"

namespace perfgap::parsers {

bool looks_sqlite(std::string_view b) { return b.size() >= 16 && std::memcmp(b.data(), "SQLite format 3\0", 16) == 0; }

bool looks_nsys_report(std::string_view b) {
  return b.rfind("NVIDIA Tegra Profiler Report", 0) == 0 || b.rfind("NVIDIA Nsight Systems Report", 0) == 0 ||
         b.rfind("NVIDIA Nsight", 0) == 0;
}

namespace {

constexpr std::uint64_t kPidMask = 0xFFFFFFFFFF000000ull;  // globalPid = globalTid & mask

struct Db {
  sqlite3* db = nullptr;
  ~Db() {
    if (db) sqlite3_close(db);
  }
};

struct Stmt {
  sqlite3_stmt* st = nullptr;
  ~Stmt() {
    if (st) sqlite3_finalize(st);
  }
};

struct Reader {
  sqlite3* db;
  std::string error;  // first SQLite error, with what was being read
  std::set<std::string> tables;
  std::string limits;  // what the bounds were, said when SQLite stopped on one

  void fail(const char* what, int rc) {
    if (!error.empty()) return;
    error = std::string("SQLite error reading ") + what + ": " + sqlite3_errmsg(db);
    if (rc == SQLITE_INTERRUPT || rc == SQLITE_NOMEM || rc == SQLITE_TOOBIG) error += " (" + limits + ")";
  }
  bool prepare(Stmt& s, const std::string& sql, const char* what) {
    if (int rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &s.st, nullptr); rc != SQLITE_OK) {
      fail(what, rc);
      return false;
    }
    return true;
  }
  // Steps a statement, calling row() for each row; false on an SQLite error.
  template <class F>
  bool each(const std::string& sql, const char* what, F row) {
    Stmt s;
    if (!prepare(s, sql, what)) return false;
    int rc;
    while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) row(s.st);
    if (rc != SQLITE_DONE) {
      fail(what, rc);
      return false;
    }
    return true;
  }
  std::set<std::string> columns(const std::string& table) {
    std::set<std::string> cols;
    each("PRAGMA table_info(\"" + table + "\")", table.c_str(), [&](sqlite3_stmt* st) {
      if (auto* t = sqlite3_column_text(st, 1)) cols.insert(reinterpret_cast<const char*>(t));
    });
    return cols;
  }
  bool has(const std::string& t) const { return tables.count(t) > 0; }
};

std::string text_of(sqlite3_stmt* st, int col) {
  auto* t = sqlite3_column_text(st, col);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(st, col))) : std::string();
}

std::uint32_t be32(std::string_view b, std::size_t at) {
  return (static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) << 24) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 16) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 8) | static_cast<unsigned char>(b[at + 3]);
}

// Names: StringIds (id -> value), resolved lazily and interned into Profile::names.
struct NsysNames {
  Profile& p;
  std::unordered_map<std::int64_t, std::string> strings;
  std::unordered_map<std::int64_t, std::uint32_t> by_id;
  std::unordered_map<std::string, std::uint32_t> by_text;
  std::uint32_t intern(const std::string& s) {
    auto [it, fresh] = by_text.emplace(s, static_cast<std::uint32_t>(p.names.size()));
    if (fresh) p.names.push_back(s);
    return it->second;
  }
  // A name column: a StringIds id (every schema in use) or, in very old exports, the text itself.
  std::uint32_t of(sqlite3_stmt* st, int col) {
    int type = sqlite3_column_type(st, col);
    if (type == SQLITE_NULL) return 0;
    if (type == SQLITE_TEXT) return intern(text_of(st, col));
    auto id = sqlite3_column_int64(st, col);
    if (auto it = by_id.find(id); it != by_id.end()) return it->second;
    auto s = strings.find(id);
    std::uint32_t n = intern(s == strings.end() ? "<string " + std::to_string(id) + ">" : s->second);
    by_id.emplace(id, n);
    return n;
  }
  // A kernel's demangled name column read as its qualified base name (kernel_base_name): shortName
  // drops the namespaces (DeepEP's deep_ep::internode::dispatch is "dispatch" there, too common to
  // tell a library by), the whole demangled name splits every template instance; this keeps the
  // namespaces and shortName's one name per function. Once per distinct string.
  std::unordered_map<std::int64_t, std::uint32_t> base_by_id;
  std::uint32_t base_of(sqlite3_stmt* st, int col) {
    int type = sqlite3_column_type(st, col);
    if (type == SQLITE_NULL) return 0;
    if (type == SQLITE_TEXT) return intern(std::string(kernel_base_name(text_of(st, col))));
    auto id = sqlite3_column_int64(st, col);
    if (auto it = base_by_id.find(id); it != base_by_id.end()) return it->second;
    auto s = strings.find(id);
    std::uint32_t n = intern(s == strings.end() ? "<string " + std::to_string(id) + ">" : std::string(kernel_base_name(s->second)));
    base_by_id.emplace(id, n);
    return n;
  }
};

// Tables this reader queries: each must be a real table of stored rows.
bool read_table(std::string_view name) {
  static constexpr std::string_view kRead[] = {"StringIds",
                                               "META_DATA_EXPORT",
                                               "EXPORT_META_DATA",
                                               "TARGET_INFO_GPU",
                                               "TARGET_INFO_CUDA_GPU",
                                               "TARGET_INFO_CUDA_DEVICE",
                                               "CUPTI_ACTIVITY_KIND_KERNEL",
                                               "CUPTI_ACTIVITY_KIND_MEMCPY",
                                               "CUPTI_ACTIVITY_KIND_MEMSET",
                                               "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                                               "CUPTI_ACTIVITY_KIND_RUNTIME",
                                               "NVTX_EVENTS",
                                               "TARGET_INFO_SYSTEM_ENV",
                                               "ENUM_CUDA_MEMCPY_OPER",
                                               "ENUM_CUDA_MEM_KIND",
                                               "ThreadNames"};
  for (auto t : kRead)
    if (t.size() == name.size() && sqlite3_strnicmp(t.data(), name.data(), static_cast<int>(t.size())) == 0) return true;
  return false;
}

// SQLite's heap for one export (page cache, statements, values): what the reads need is a few
// MiB; the file's own pages are read in place (mmap of the caller's bytes), not from the heap.
constexpr sqlite3_int64 kSqliteHeapLimit = 256ll << 20;
// One value (a kernel name, the CpuInfo JSON): real ones are KiB.
constexpr int kSqliteMaxValue = 16 << 20;
// Work bound: the progress handler runs every kSqliteProgressEvery virtual-machine instructions;
// reading a real export takes a few per byte of the file, so a statement that needs more than
// kSqliteStepsPerByte per byte (plus a base) is not reading stored rows and is stopped.
constexpr int kSqliteProgressEvery = 10000;
constexpr std::uint64_t kSqliteStepsPerByte = 64;
constexpr std::uint64_t kSqliteStepBase = 100'000'000;
struct Budget {
  std::uint64_t left, used;
};
extern "C" int over_budget(void* arg) {
  auto* b = static_cast<Budget*>(arg);
  b->used += kSqliteProgressEvery;
  return b->used > b->left ? 1 : 0;
}

// Plain reads only: SELECT, reading columns, count(), and the PRAGMAs that list columns.
extern "C" int read_only_authorizer(void*, int action, const char* a, const char* b, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ: return SQLITE_OK;
    case SQLITE_FUNCTION: return b && (sqlite3_stricmp(b, "count") == 0) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_PRAGMA:
      return a && (sqlite3_stricmp(a, "table_info") == 0 || sqlite3_stricmp(a, "table_xinfo") == 0 || sqlite3_stricmp(a, "mmap_size") == 0)
                 ? SQLITE_OK
                 : SQLITE_DENY;
    default: return SQLITE_DENY;
  }
}

struct Api {
  std::uint64_t pid;
  std::int64_t corr, start, end;
  bool graph = false;       // cudaGraphLaunch / cuGraphLaunch
  std::uint32_t thread = 0;  // its thread id (globalTid's low 24 bits); 0 unknown
};

// A copy's direction by its ENUM_CUDA_MEMCPY_OPER label ("Host-to-Device"), or by CUPTI's
// number where the export has no enum table (the 2021 schema).
CopyKind copy_kind_of(std::string_view label) {
  if (label == "Host-to-Device") return CopyKind::h2d;
  if (label == "Device-to-Host") return CopyKind::d2h;
  if (label == "Device-to-Device") return CopyKind::d2d;
  if (label == "Peer-to-Peer") return CopyKind::p2p;
  if (label.empty() || label == "Unknown") return CopyKind::unknown;
  return CopyKind::other;
}
CopyKind copy_kind_of(std::int64_t cupti) {
  switch (cupti) {
    case 0: return CopyKind::unknown;
    case 1: return CopyKind::h2d;
    case 2: return CopyKind::d2h;
    case 8: return CopyKind::d2d;
    case 10: return CopyKind::p2p;
    default: return CopyKind::other;
  }
}
// Memory kinds by ENUM_CUDA_MEM_KIND label, or by nsys's own numbering (0 pageable, 1 pinned,
// 2 device, 3 array, 4 managed, 5 device static, 6 managed static, 7 unknown; the 2021 export's
// host-to-device rows have srcKind 0, dstKind 2), which is not CUPTI's.
HostMem mem_kind_of(std::string_view label) {
  if (label == "Pageable") return HostMem::pageable;
  if (label == "Pinned") return HostMem::pinned;
  if (label.rfind("Managed", 0) == 0) return HostMem::managed;
  if (label.rfind("Device", 0) == 0 || label == "Array") return HostMem::none;
  return HostMem::unknown;
}
HostMem mem_kind_of(std::int64_t nsys) {
  switch (nsys) {
    case 0: return HostMem::pageable;
    case 1: return HostMem::pinned;
    case 2:
    case 3:
    case 5: return HostMem::none;
    case 4:
    case 6: return HostMem::managed;
    default: return HostMem::unknown;
  }
}
// The host memory of a copy from its two ends: the host side's kind (none for device-only copies).
HostMem host_side(CopyKind k, HostMem src, HostMem dst) {
  if (k == CopyKind::d2d || k == CopyKind::p2p) return HostMem::none;
  if (k == CopyKind::h2d) return src;
  if (k == CopyKind::d2h) return dst;
  for (HostMem m : {HostMem::pageable, HostMem::managed, HostMem::pinned})
    if (src == m || dst == m) return m;
  return src == HostMem::none && dst == HostMem::none ? HostMem::none : HostMem::unknown;
}

// A file SQLite would read past its end: too short for its header, or shorter than the pages its
// header announces. Empty when the header is whole.
std::string nsys_header_problem(std::string_view bytes) {
  if (bytes.size() < 100) return "truncated SQLite file: " + std::to_string(bytes.size()) + " bytes, shorter than its 100-byte header";
  std::uint64_t page = (static_cast<unsigned char>(bytes[16]) << 8) | static_cast<unsigned char>(bytes[17]);
  if (page == 1) page = 65536;
  std::uint64_t pages = be32(bytes, 28);
  if (pages > 0 && be32(bytes, 92) == be32(bytes, 24) && page * pages > bytes.size())
    return "truncated SQLite file: " + std::to_string(bytes.size()) + " bytes of the " + std::to_string(page * pages) + " its header announces";
  return {};
}

// Opens the bytes as a read-only database with perfgap's bounds; the error's text, empty when open.
std::string open_nsys_db(Db& db, std::string_view bytes, Budget& budget) {
  // Bounds that hold whatever the file says: SQLite's heap (process-wide; only this reader uses
  // SQLite), one value's length, and the work of every statement (below).
  sqlite3_hard_heap_limit64(kSqliteHeapLimit);
  // One thread reads this connection: no SQLite mutexes (they cost ~10% per column call).
  if (sqlite3_open_v2(":memory:", &db.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    return "cannot open an in-memory SQLite database";
  // Nothing stored in the file runs: no triggers, no views, no functions from the schema, no
  // writes to the schema; only plain reads pass the authorizer (no ATTACH, no recursion).
  sqlite3_db_config(db.db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db.db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db.db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
  sqlite3_db_config(db.db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
#endif
  sqlite3_limit(db.db, SQLITE_LIMIT_LENGTH, kSqliteMaxValue);
  sqlite3_limit(db.db, SQLITE_LIMIT_ATTACHED, 0);
  // The bytes stay the caller's: read-only, never freed or resized by SQLite.
  auto* data = reinterpret_cast<unsigned char*>(const_cast<char*>(bytes.data()));
  if (sqlite3_deserialize(db.db, "main", data, static_cast<sqlite3_int64>(bytes.size()), static_cast<sqlite3_int64>(bytes.size()),
                          SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
    return std::string("not a readable SQLite database: ") + sqlite3_errmsg(db.db);

  // From here only reads (deserialize attaches the bytes itself, which the authorizer would refuse).
  sqlite3_set_authorizer(db.db, read_only_authorizer, nullptr);
  budget = Budget{kSqliteStepBase + kSqliteStepsPerByte * bytes.size(), 0};
  sqlite3_progress_handler(db.db, kSqliteProgressEvery, over_budget, &budget);
  // Pages are read in place from the bytes (memdb supports mmap) instead of copied into the page cache.
  sqlite3_exec(db.db, ("PRAGMA mmap_size=" + std::to_string(bytes.size())).c_str(), nullptr, nullptr, nullptr);
  return {};
}

// Lists the real tables into r.tables, and refuses SQL stored in the file: the error's text,
// empty when every table read is stored rows.
std::string nsys_refused_schema(Reader& r) {
  // Only real tables are tables: a view, a virtual table or a trigger under the name of a table
  // perfgap reads is refused (SQL stored in a file never runs here: a recursive view would never
  // end, a view of views overflows the stack).
  std::string refused;
  if (!r.each("SELECT type, name, tbl_name, sql FROM sqlite_master", "sqlite_master", [&](sqlite3_stmt* st) {
        auto type = text_of(st, 0), name = text_of(st, 1), table = text_of(st, 2), sql = text_of(st, 3);
        bool virtual_table = type == "table" && sql.size() >= 20 && sqlite3_strnicmp(sql.c_str(), "CREATE VIRTUAL TABLE", 20) == 0;
        if (type == "table" && !virtual_table) r.tables.insert(name);
        if (!refused.empty()) return;
        if ((type == "view" || virtual_table) && read_table(name))
          refused = name + " is " + (virtual_table ? "a virtual table" : "a view") + ", not a table";
        else if (type == "trigger" && read_table(table))
          refused = "a trigger (" + name + ") on " + table;
      }))
    return "corrupt or unreadable SQLite database: " + r.error;
  if (!refused.empty())
    return refused + ": not an Nsight Systems export (perfgap runs no SQL stored in a profile; export it again with nsys export --type sqlite)";
  // A virtual generated column computes its value from SQL in the schema: refused in the tables read.
  for (const auto& t : r.tables) {
    if (!read_table(t)) continue;
    std::string generated;
    r.each("PRAGMA table_xinfo(\"" + t + "\")", t.c_str(), [&](sqlite3_stmt* st) {
      if (sqlite3_column_int(st, 6) == 2 && generated.empty()) generated = text_of(st, 1);
    });
    if (!r.error.empty()) return r.error;
    if (!generated.empty())
      return t + "." + generated + " is a generated column, not stored data: not an Nsight Systems export (perfgap runs no SQL stored in a profile)";
  }
  return {};
}

// An SQLite database without any of the export's tables: what it has instead; empty for an export.
std::string not_nsys_message(const Reader& r) {
  bool nsys = r.has("StringIds") || r.has("TARGET_INFO_GPU") || r.has("TARGET_INFO_CUDA_GPU") || r.has("META_DATA_EXPORT") ||
              r.has("EXPORT_META_DATA") || r.has("CUPTI_ACTIVITY_KIND_KERNEL") || r.has("CUPTI_ACTIVITY_KIND_RUNTIME");
  if (nsys) return {};
  std::string some;
  int n = 0;
  for (const auto& t : r.tables)
    if (n++ < 4) some += (some.empty() ? "" : ", ") + t;
  return "an SQLite database, but not an Nsight Systems export (no StringIds, TARGET_INFO_* or CUPTI_ACTIVITY_KIND_* tables" +
         (some.empty() ? std::string("; no tables at all") : "; has " + some + (r.tables.size() > 4 ? ", ..." : "")) + ")";
}

// The export's schema version into p.format, its product version into p.system.
void read_nsys_format(Reader& r, Profile& p, bool wal) {
  // Schema version: META_DATA_EXPORT (3.x) or EXPORT_META_DATA (older); the 2021 exports have neither.
  std::string schema;
  for (const char* t : {"META_DATA_EXPORT", "EXPORT_META_DATA"})
    if (r.has(t) && r.columns(t).count("name"))
      r.each(std::string("SELECT name, value FROM ") + t, t, [&](sqlite3_stmt* st) {
        auto n = text_of(st, 0);
        if (n == "EXPORT_SCHEMA_VERSION") schema = text_of(st, 1);
        if (n == "EXPORT_PRODUCT_VERSION") p.system.emplace_back("nsys_export_version", text_of(st, 1));
      });
  // The session's start on the wall clock (exports of 2022 on): the activity tables' times count
  // from it, as a Kineto trace's from baseTimeNanoseconds, so it goes by the same name. It tells
  // one run's ranks from another run's (analyzers/profile_ranks check_rank_set).
  if (r.has("TARGET_INFO_SESSION_START_TIME") && r.columns("TARGET_INFO_SESSION_START_TIME").count("utcEpochNs"))
    r.each("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", "TARGET_INFO_SESSION_START_TIME",
           [&](sqlite3_stmt* st) { p.system.emplace_back("base_time_ns", text_of(st, 0)); });
  if (wal) p.notes.push_back("a WAL-mode database: read from its main file as checkpointed (a -wal file beside it is not read)");
  p.format = "Nsight Systems SQLite export, schema " +
             (schema.empty() ? std::string(r.has("TARGET_INFO_CUDA_GPU") ? "of ~2021 (TARGET_INFO_CUDA_GPU, no version table)" : "unknown (no version table)") : schema);
}

// StringIds into names.strings; false on an SQLite error (in r.error).
bool read_nsys_strings(Reader& r, NsysNames& names, Profile& p) {
  if (r.has("StringIds")) {
    auto cols = r.columns("StringIds");
    if (cols.count("id") && cols.count("value"))
      if (!r.each("SELECT id, value FROM StringIds", "StringIds", [&](sqlite3_stmt* st) { names.strings.emplace(sqlite3_column_int64(st, 0), text_of(st, 1)); }))
        return false;
  } else {
    p.notes.push_back("no StringIds table: kernel names unknown");
  }
  return true;
}

// GPU names by device id, and what maps a process's CUDA device to its GPU.
struct NsysGpuNames {
  std::map<std::int64_t, std::string> gpu_name;
  std::map<std::pair<std::uint64_t, std::int64_t>, std::int64_t> cuda_to_gpu;  // (pid, cudaId) -> gpuId

  std::string name_of(std::uint64_t pid, std::int64_t dev) const {
    std::int64_t id = dev;
    if (!cuda_to_gpu.empty()) {
      // Its pid column holds the plain pid (as TARGET_INFO_CUDA_CONTEXT_INFO.processId does); a
      // serialized globalPid or none are taken too.
      auto it = cuda_to_gpu.end();
      for (std::uint64_t k : {(pid >> 24) & 0xFFFFFF, pid, std::uint64_t{0}})
        if ((it = cuda_to_gpu.find({k, dev})) != cuda_to_gpu.end()) break;
      if (it == cuda_to_gpu.end()) return {};
      id = it->second;
    }
    auto n = gpu_name.find(id);
    return n == gpu_name.end() ? std::string() : n->second;
  }
};

NsysGpuNames read_nsys_gpu_names(Reader& r) {
  NsysGpuNames g;
  for (auto [t, idcol] : {std::pair{"TARGET_INFO_GPU", "id"}, std::pair{"TARGET_INFO_CUDA_GPU", "deviceId"}}) {
    if (!r.has(t)) continue;
    auto cols = r.columns(t);
    if (!cols.count(idcol) || !cols.count("name")) continue;
    r.each(std::string("SELECT ") + idcol + ", name FROM " + t, t, [&](sqlite3_stmt* st) {
      g.gpu_name.emplace(sqlite3_column_int64(st, 0), text_of(st, 1));
    });
  }
  // Exports of 2024 on key TARGET_INFO_GPU by a GPU id of their own and map each process's CUDA
  // device (the activity tables' deviceId) to it in TARGET_INFO_CUDA_DEVICE (pid, cudaId, gpuId):
  // under CUDA_VISIBLE_DEVICES the two differ. Older exports: the deviceId is the GPU's id.
  if (r.has("TARGET_INFO_CUDA_DEVICE")) {
    auto cols = r.columns("TARGET_INFO_CUDA_DEVICE");
    if (cols.count("gpuId") && cols.count("cudaId"))
      r.each(std::string("SELECT cudaId, gpuId, ") + (cols.count("pid") ? "pid" : "0") + " FROM TARGET_INFO_CUDA_DEVICE",
             "TARGET_INFO_CUDA_DEVICE", [&](sqlite3_stmt* st) {
               g.cuda_to_gpu[{static_cast<std::uint64_t>(sqlite3_column_int64(st, 2)), sqlite3_column_int64(st, 0)}] =
                   sqlite3_column_int64(st, 1);
             });
  }
  return g;
}

// A column's value through the export's enum table where it has one, else by nsys's numbers.
template <class Table, class ByNumber, class Value>
Value nsys_enum_value(sqlite3_stmt* st, int col, const Table& table, ByNumber by_number, Value unknown) {
  if (sqlite3_column_type(st, col) == SQLITE_NULL) return unknown;
  const auto v = sqlite3_column_int64(st, col);
  if (table.empty()) return by_number(v);
  auto it = table.find(v);
  return it == table.end() ? unknown : it->second;
}

// Copy directions and memory kinds: the export's enum tables where present, else the numbers.
struct NsysCopyEnums {
  std::map<std::int64_t, CopyKind> copy_enum;
  std::map<std::int64_t, HostMem> mem_enum;

  CopyKind copy_kind(sqlite3_stmt* st, int col) const {
    return nsys_enum_value(st, col, copy_enum, [](std::int64_t v) { return copy_kind_of(v); }, CopyKind::unknown);
  }
  HostMem mem_kind(sqlite3_stmt* st, int col) const {
    return nsys_enum_value(st, col, mem_enum, [](std::int64_t v) { return mem_kind_of(v); }, HostMem::unknown);
  }
};

NsysCopyEnums read_nsys_copy_enums(Reader& r) {
  NsysCopyEnums e;
  for (auto [table, copies] : {std::pair{"ENUM_CUDA_MEMCPY_OPER", true}, std::pair{"ENUM_CUDA_MEM_KIND", false}}) {
    // Plain copies: clang 14 cannot capture a structured binding in the lambda below.
    const char* t = table;
    const bool is_copy = copies;
    if (!r.has(t)) continue;
    auto cols = r.columns(t);
    if (!cols.count("id") || !cols.count("label")) continue;
    r.each(std::string("SELECT id, label FROM ") + t, t, [&](sqlite3_stmt* st) {
      const auto id = sqlite3_column_int64(st, 0);
      const auto label = text_of(st, 1);
      if (is_copy) e.copy_enum[id] = copy_kind_of(label);
      else e.mem_enum[id] = mem_kind_of(label);
    });
  }
  return e;
}

// The GPU activity tables (kernels, copies, memsets, whole-graph executions) into p.acts, each
// activity's correlation id in api_start until the launch calls are joined.
struct NsysActivityReader {
  Reader& r;
  Profile& p;
  NsysNames& names;
  const NsysGpuNames& gpus;
  const NsysCopyEnums& enums;
  std::unordered_map<std::uint64_t, std::uint32_t> gpu_index;  // (pid | device) -> index
  std::size_t no_end = 0, graphs = 0;
  std::unordered_map<std::int64_t, std::uint32_t> graph_name;  // graphId -> name index

  std::uint32_t gpu_of(std::uint64_t pid, std::int64_t dev) {
    std::uint64_t key = pid ^ (static_cast<std::uint64_t>(dev) & 0xFFFFFF);
    auto [it, fresh] = gpu_index.emplace(key, static_cast<std::uint32_t>(p.gpus.size()));
    if (fresh) {
      GpuInfo g;
      g.process = pid;
      g.device = dev;
      auto n = gpus.name_of(pid, dev);
      g.key = (pid ? "pid" + std::to_string((pid >> 24) & 0xFFFFFF) + "." : std::string()) + "gpu" + std::to_string(dev);
      g.label =
          "GPU " + std::to_string(dev) + (!n.empty() ? " (" + n + ")" : "") + (pid ? " pid " + std::to_string((pid >> 24) & 0xFFFFFF) : "");
      p.gpus.push_back(std::move(g));
    }
    return it->second;
  }

  // The SELECT of one activity table from the columns it has ("0" or NULL for those it lacks).
  static std::string query(const char* table, ActKind kind, const std::set<std::string>& cols, bool demangled) {
    auto col = [&](const char* c) { return cols.count(c) ? std::string(c) : std::string("0"); };
    std::string name = "0";
    if (demangled) name = "demangledName";
    else if (kind == ActKind::kernel)
      for (const char* c : {"shortName", "mangledName", "name"})
        if (cols.count(c)) {
          name = c;
          break;
        }
    if (kind == ActKind::graph) name = col("graphId");  // named "CUDA graph <graphId>"
    // A copy's bytes, direction and ends (NULL where the schema lacks the column: not known).
    auto col_or_null = [&](const char* c) { return cols.count(c) ? std::string(c) : std::string("NULL"); };
    std::string copy_cols = kind == ActKind::memcpy ? ", " + col_or_null("bytes") + ", " + col_or_null("copyKind") + ", " +
                                                          col_or_null("srcKind") + ", " + col_or_null("dstKind")
                                                    : "";
    return "SELECT start, end, " + col("deviceId") + ", " + col("correlationId") + ", " + col("globalPid") + ", " + col("streamId") + ", " + name +
           copy_cols + " FROM " + table;
  }

  // One table; false where the kernel table cannot be read (the error in r.error).
  bool read(const char* table, ActKind kind) {
    if (!r.has(table)) return true;
    auto cols = r.columns(table);
    for (const char* need : {"start", "end"})
      if (!cols.count(need)) {
        if (kind == ActKind::kernel) {
          if (r.error.empty()) r.error = std::string(table) + " has no " + need + " column: not an Nsight Systems schema this reader knows";
          return false;
        }
        p.notes.push_back(std::string(table) + " has no " + need + " column: left out");
        return true;
      }
    const bool demangled = kind == ActKind::kernel && cols.count("demangledName");
    std::string sql = query(table, kind, cols, demangled);
    r.each(std::string("SELECT count(*) FROM ") + table, table, [&](sqlite3_stmt* st) {
      p.acts.reserve(p.acts.size() + static_cast<std::size_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(st, 0))));
    });
    std::uint32_t last_gpu = 0;
    std::uint64_t last_key = ~0ull;
    return r.each(sql, table, [&](sqlite3_stmt* st) {
      if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
        ++no_end;
        return;
      }
      GpuActivity a;
      a.start = sqlite3_column_int64(st, 0);
      a.end = sqlite3_column_int64(st, 1);
      if (a.end < a.start) {
        ++no_end;
        return;
      }
      auto dev = sqlite3_column_int64(st, 2);
      auto pid = static_cast<std::uint64_t>(sqlite3_column_int64(st, 4)) & kPidMask;
      std::uint64_t key = pid ^ (static_cast<std::uint64_t>(dev) & 0xFFFFFF);
      if (key != last_key) {
        last_gpu = gpu_of(pid, dev);
        last_key = key;
      }
      a.gpu = last_gpu;
      a.api_start = sqlite3_column_int64(st, 3);  // the correlation id until the join below
      a.stream = static_cast<std::uint32_t>(sqlite3_column_int64(st, 5));
      a.kind = kind;
      if (kind == ActKind::kernel) a.name = demangled ? names.base_of(st, 6) : names.of(st, 6);
      if (kind == ActKind::memcpy) {
        a.msg_bytes = static_cast<std::uint64_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(st, 7)));
        a.copy = enums.copy_kind(st, 8);
        a.host_mem = host_side(a.copy, enums.mem_kind(st, 9), enums.mem_kind(st, 10));
      }
      if (kind == ActKind::graph) {
        auto g = sqlite3_column_int64(st, 6);
        auto [gi, fresh] = graph_name.emplace(g, 0);
        if (fresh) gi->second = names.intern("CUDA graph " + std::to_string(g));
        a.name = gi->second;
        ++graphs;
      }
      p.acts.push_back(a);
    });
  }
};

// Launch calls: CUDA runtime and driver API rows, to be joined on (process, correlationId);
// false on an SQLite error (in r.error).
bool read_nsys_launch_calls(Reader& r, const NsysNames& names, Profile& p, std::vector<Api>& api) {
  if (r.has("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    auto cols = r.columns("CUPTI_ACTIVITY_KIND_RUNTIME");
    if (cols.count("start") && cols.count("end") && cols.count("correlationId")) {
      std::string sql = "SELECT start, end, " + std::string(cols.count("globalTid") ? "globalTid" : "0") + ", correlationId, " +
                        (cols.count("nameId") ? "nameId" : "NULL") + " FROM CUPTI_ACTIVITY_KIND_RUNTIME";
      // The calls that launch a whole CUDA graph (cudaGraphLaunch_v10000, cuGraphLaunch): their
      // kernels are counted apart in the launch figures.
      std::unordered_map<std::int64_t, bool> graph_call;
      auto is_graph = [&](sqlite3_stmt* st) {
        if (sqlite3_column_type(st, 4) == SQLITE_NULL) return false;
        const auto id = sqlite3_column_int64(st, 4);
        auto [it, fresh] = graph_call.emplace(id, false);
        if (fresh)
          if (auto s = names.strings.find(id); s != names.strings.end())
            it->second = s->second.rfind("cudaGraphLaunch", 0) == 0 || s->second.rfind("cuGraphLaunch", 0) == 0;
        return it->second;
      };
      r.each("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_RUNTIME", [&](sqlite3_stmt* st) {
        api.reserve(static_cast<std::size_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(st, 0))));
      });
      // The calls that make the host wait for the GPU (cuStreamSynchronize, a synchronous cudaMemcpy).
      std::unordered_map<std::int64_t, bool> sync_call;
      auto is_sync = [&](sqlite3_stmt* st) {
        if (sqlite3_column_type(st, 4) == SQLITE_NULL) return false;
        const auto id = sqlite3_column_int64(st, 4);
        auto [it, fresh] = sync_call.emplace(id, false);
        if (fresh)
          if (auto s = names.strings.find(id); s != names.strings.end()) it->second = is_sync_call(s->second);
        return it->second;
      };
      // The long calls are kept by name: where a host stall's time went (cudaMalloc, module loading).
      std::unordered_map<std::int64_t, std::uint32_t> call_index;
      auto slow_call_name = [&](sqlite3_stmt* st) -> std::uint32_t {
        const auto id = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
        auto [it, fresh] = call_index.emplace(id, 0);
        if (fresh) {
          auto s = names.strings.find(id);
          it->second = p.call_name_index(s != names.strings.end() ? std::string_view(s->second) : std::string_view("unnamed call"));
        }
        return it->second;
      };
      if (!r.each(sql, "CUPTI_ACTIVITY_KIND_RUNTIME", [&](sqlite3_stmt* st) {
            if (sqlite3_column_type(st, 1) == SQLITE_NULL) return;
            const std::int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
            if (is_sync(st)) ++p.sync_calls, p.sync_ns += end - start;
            const auto tid = static_cast<std::uint64_t>(sqlite3_column_int64(st, 2));
            const auto thread = static_cast<std::uint32_t>(tid & ~kPidMask);
            api.push_back({tid & kPidMask, sqlite3_column_int64(st, 3), start, end, is_graph(st), thread});
            if (end - start >= kSlowHostCallNs)
              p.slow_calls.push_back({.start = start, .end = end, .name = slow_call_name(st), .thread = thread, .file = 0});
          }))
        return false;
      std::sort(p.slow_calls.begin(), p.slow_calls.end(), [](const SlowHostCall& a, const SlowHostCall& b) { return a.start < b.start; });
    } else {
      p.notes.push_back("CUPTI_ACTIVITY_KIND_RUNTIME lacks start/end/correlationId: no launch data");
    }
  } else {
    p.notes.push_back("no CUPTI_ACTIVITY_KIND_RUNTIME table: no launch calls (launch overhead and host-bound idle unknown)");
  }
  return true;
}

bool nsys_api_before(const Api& a, const Api& b) { return a.pid != b.pid ? a.pid < b.pid : a.corr < b.corr; }

// Each activity's launch call by (process, correlation id): its start and end in api_start and
// api_end (-1: none), and whether it was a CUDA graph launch.
void join_nsys_launch_calls(Profile& p, std::vector<Api>& api) {
  bool any_pid = false;
  for (const auto& g : p.gpus) any_pid = any_pid || g.process != 0;
  if (!any_pid)  // no process in the activity tables: correlation ids alone
    for (auto& x : api) x.pid = 0;
  if (!std::is_sorted(api.begin(), api.end(), nsys_api_before)) std::sort(api.begin(), api.end(), nsys_api_before);
  // A GPU's activities mostly come in launch order: search forward from where its last one
  // matched (galloping), a full binary search otherwise.
  std::vector<std::size_t> cursor(p.gpus.size(), 0);
  for (auto& a : p.acts) {
    std::int64_t corr = a.api_start;
    a.api_start = -1;
    if (corr == 0 || api.empty()) continue;
    Api key{p.gpus[a.gpu].process, corr, 0, 0, false, 0};
    std::size_t lo = 0, hi = api.size(), at = cursor[a.gpu];
    if (at < api.size() && !nsys_api_before(key, api[at])) {
      std::size_t step = 1;
      lo = at;
      while (at + step < api.size() && nsys_api_before(api[at + step], key)) {
        lo = at + step;
        step *= 2;
      }
      hi = std::min(api.size(), at + step + 1);
    }
    auto it = std::lower_bound(api.begin() + static_cast<long>(lo), api.begin() + static_cast<long>(hi), key, nsys_api_before);
    if (it != api.end() && it->pid == key.pid && it->corr == corr) {
      a.api_start = it->start;
      a.api_end = it->end;
      a.graph_launch = it->graph;
      a.api_thread = it->thread;
      cursor[a.gpu] = static_cast<std::size_t>(it - api.begin());
    }
  }
}

// NVTX ranges (push/pop and start/end; marks have no end): text or StringIds[textId]; false on
// an SQLite error (in r.error).
bool read_nsys_ranges(Reader& r, NsysNames& names, Profile& p) {
  if (!r.has("NVTX_EVENTS")) return true;
  auto cols = r.columns("NVTX_EVENTS");
  if (!cols.count("start") || !cols.count("end") || (!cols.count("text") && !cols.count("textId"))) return true;
  std::string text = cols.count("text") && cols.count("textId") ? "text, textId" : cols.count("text") ? "text, NULL" : "NULL, textId";
  std::string sql = "SELECT start, end, " + std::string(cols.count("globalTid") ? "globalTid" : "0") + ", " + text +
                    " FROM NVTX_EVENTS WHERE end IS NOT NULL AND end > start";
  return r.each(sql, "NVTX_EVENTS", [&](sqlite3_stmt* st) {
    ProfileRange g;
    g.start = sqlite3_column_int64(st, 0);
    g.end = sqlite3_column_int64(st, 1);
    g.process = static_cast<std::uint64_t>(sqlite3_column_int64(st, 2)) & kPidMask;
    g.name = sqlite3_column_type(st, 3) != SQLITE_NULL ? names.of(st, 3) : names.of(st, 4);
    p.ranges.push_back(g);
  });
}

// The names of the threads of the processes with GPU work (ThreadNames: nameId, globalTid), each
// once: a framework's threads (pt_autograd_0) say which made the work. Other processes' threads
// (an export of the whole system) are not the program's.
void read_nsys_threads(Reader& r, NsysNames& names, Profile& p) {
  if (!r.has("ThreadNames")) return;
  auto cols = r.columns("ThreadNames");
  if (!cols.count("nameId") || !cols.count("globalTid")) return;
  std::set<std::uint64_t> gpu_processes;
  for (const auto& g : p.gpus) gpu_processes.insert(g.process);
  std::set<std::uint32_t> seen;
  r.each("SELECT nameId, globalTid FROM ThreadNames", "ThreadNames", [&](sqlite3_stmt* st) {
    if (!gpu_processes.count(static_cast<std::uint64_t>(sqlite3_column_int64(st, 1)) & kPidMask)) return;
    const std::uint32_t n = names.of(st, 0);
    if (n != 0 && p.threads.size() < 4096 && seen.insert(n).second) p.threads.push_back(p.names[n]);
  });
}

// DeviceEnvironment's NAME=value;NAME=value into p.env (a ';' inside a value continues it).
void nsys_device_environment(const std::string& v, Profile& p) {
  std::size_t at = 0;
  while (at <= v.size()) {
    auto semi = v.find(';', at);
    std::string item = v.substr(at, semi == std::string::npos ? std::string::npos : semi - at);
    auto eq = item.find('=');
    bool named = eq != std::string::npos && eq > 0 &&
                 std::all_of(item.begin(), item.begin() + static_cast<long>(eq), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (named) p.env.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    else if (!p.env.empty() && !item.empty()) p.env.back().second += ";" + item;
    if (semi == std::string::npos) break;
    at = semi + 1;
  }
}

// The profiled job's environment and system: TARGET_INFO_SYSTEM_ENV (name, value).
void read_nsys_env(Reader& r, Profile& p) {
  if (!r.has("TARGET_INFO_SYSTEM_ENV")) return;
  auto cols = r.columns("TARGET_INFO_SYSTEM_ENV");
  if (!cols.count("name") || !cols.count("value")) return;
  p.env_present = true;
  r.each("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV", "TARGET_INFO_SYSTEM_ENV", [&](sqlite3_stmt* st) {
    auto n = text_of(st, 0);
    auto v = text_of(st, 1);
    if (n == "DeviceEnvironment") {
      nsys_device_environment(v, p);
    } else if (n == "NvDriverVersion" || n == "CudaDriverVersion" || n == "CpuDescription" || n == "Hostname" || n == "OsDescription" ||
               n == "CpuCores") {
      p.system.emplace_back(n, v);
    } else if (n == "CpuInfo") {
      auto j = nlohmann::json::parse(v, nullptr, false);
      if (!j.is_discarded() && j.contains("items") && j["items"].is_array()) {
        std::set<long> sockets;
        for (const auto& it : j["items"])
          if (it.is_object() && it.contains("socket") && it["socket"].is_number_integer()) sockets.insert(it["socket"].get<long>());
        if (!sockets.empty()) p.system.emplace_back("CpuSockets", std::to_string(sockets.size()));
      }
    }
  });
}

}  // namespace

Parsed<Profile> read_nsys_sqlite(std::string_view bytes) {
  if (!looks_sqlite(bytes)) return parse_fail("not an SQLite database (no 'SQLite format 3' header): pass the output of nsys export --type sqlite");
  if (auto problem = nsys_header_problem(bytes); !problem.empty()) return parse_fail(problem);

  // A WAL-mode database (file format bytes 2/2) cannot be opened over memory; checkpointed, its
  // main file holds every row, so a copy marked as a rollback-journal database reads the same.
  std::string legacy;
  bool wal = static_cast<unsigned char>(bytes[18]) == 2 && static_cast<unsigned char>(bytes[19]) == 2;
  if (wal) {
    legacy.assign(bytes);
    legacy[18] = legacy[19] = 1;
    bytes = legacy;
  }

  Db db;
  Budget budget{0, 0};  // the progress handler's, for as long as db is open
  if (auto problem = open_nsys_db(db, bytes, budget); !problem.empty()) return parse_fail(problem);
  Reader r{db.db, {}, {}, {}};
  r.limits = "perfgap's bounds for one export: " + std::to_string(budget.left / 1'000'000) + " million SQLite steps, " +
             std::to_string(kSqliteHeapLimit >> 20) + " MiB of SQLite memory, " + std::to_string(kSqliteMaxValue >> 20) + " MiB per value";
  if (auto problem = nsys_refused_schema(r); !problem.empty()) return parse_fail(problem);
  if (auto problem = not_nsys_message(r); !problem.empty()) return parse_fail(problem);

  Profile p;
  read_nsys_format(r, p, wal);
  // A capture whose GPU work all ran in CUDA graphs traced whole (--cuda-graph-trace=graph) may
  // have CUPTI_ACTIVITY_KIND_GRAPH_TRACE and no kernel table.
  if (!r.has("CUPTI_ACTIVITY_KIND_KERNEL") && !r.has("CUPTI_ACTIVITY_KIND_GRAPH_TRACE"))
    return parse_fail("Nsight Systems export without GPU kernels (no CUPTI_ACTIVITY_KIND_KERNEL table): profile with nsys profile --trace=cuda");

  NsysNames names{p, {}, {}, {}, {}};
  if (!read_nsys_strings(r, names, p)) return parse_fail(r.error);
  const NsysGpuNames gpus = read_nsys_gpu_names(r);
  const NsysCopyEnums enums = read_nsys_copy_enums(r);

  // GPU activity tables: the same column names in every schema in use.
  NsysActivityReader acts{r, p, names, gpus, enums, {}, 0, 0, {}};
  if (!acts.read("CUPTI_ACTIVITY_KIND_KERNEL", ActKind::kernel) || !acts.read("CUPTI_ACTIVITY_KIND_MEMCPY", ActKind::memcpy) ||
      !acts.read("CUPTI_ACTIVITY_KIND_MEMSET", ActKind::memset) || !acts.read("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", ActKind::graph))
    return parse_fail(r.error);
  if (acts.no_end) p.notes.push_back(std::to_string(acts.no_end) + " GPU activity rows without a valid end were left out");
  if (acts.graphs)
    p.notes.push_back(
        std::to_string(acts.graphs) +
        " CUDA graph executions were traced whole (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): their kernels, NCCL ones included, are not in "
        "the export and count as compute; profile with nsys profile --cuda-graph-trace=node to see them");
  if (p.acts.empty()) return parse_fail("Nsight Systems export with an empty CUPTI_ACTIVITY_KIND_KERNEL table: no GPU kernels");

  // Collective per distinct name.
  std::vector<Coll> coll_of(p.names.size(), Coll::none);
  for (std::size_t i = 0; i < p.names.size(); ++i) coll_of[i] = nccl_collective(p.names[i]);
  for (auto& a : p.acts)
    if (a.kind == ActKind::kernel) a.coll = coll_of[a.name];

  std::vector<Api> api;
  if (!read_nsys_launch_calls(r, names, p, api)) return parse_fail(r.error);
  p.api_calls = api.size();
  join_nsys_launch_calls(p, api);
  if (!read_nsys_ranges(r, names, p)) return parse_fail(r.error);
  // Under emit_nvtx PyTorch's communication ops are NVTX ranges (nccl:all_to_all): they name the
  // collective of the SendRecv kernels launched inside them.
  if (const std::size_t named = name_sendrecv_collectives(p))
    p.notes.push_back(std::to_string(named) + " SendRecv kernels counted as the collective of the nccl:* NVTX range that launched them (NCCL runs all-to-all as send/recv)");
  read_nsys_env(r, p);
  read_nsys_threads(r, names, p);
  p.framework = framework_of(p);
  for (const auto& [id, n] : gpus.gpu_name)
    if (!n.empty()) p.system.emplace_back("GPU " + std::to_string(id), n);
  for (const auto& [k, v] : p.system)
    if (k == "Hostname" && !v.empty()) {
      for (auto& g : p.gpus) g.host = v;  // one export is one node's
      break;
    }
  return p;
}

}  // namespace perfgap::parsers
