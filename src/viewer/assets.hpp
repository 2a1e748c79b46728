// Files embedded into the library at build time (cmake/embed_assets.cmake, CMakeLists.txt):
// Debian's three.js r111 with two of its examples, and the viewer page's own markup and script.
#pragma once

#include <string_view>

namespace loopdyn::viewer_assets {

std::string_view three_js();           ///< three.min.js
std::string_view orbit_controls_js();  ///< examples/js/controls/OrbitControls.js (THREE.OrbitControls)
std::string_view stl_loader_js();      ///< examples/js/loaders/STLLoader.js (THREE.STLLoader)
std::string_view page_html();          ///< src/viewer/page.html
std::string_view page_js();            ///< src/viewer/page.js

}  // namespace loopdyn::viewer_assets
