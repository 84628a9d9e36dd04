// What perfgap profile and check --profile-seconds N say alike (the window itself: node/profile_window).
#pragma once

namespace perfgap::cli {

// "--root trees cannot be profiled", the one refusal profile and check --profile share.
inline constexpr const char* kProfileRootRefusal = "profile measures the live system; --root trees cannot be profiled";

}  // namespace perfgap::cli
