#!/bin/sh
# Install the ONNX Designer app bundle for one user (default) or system-wide:
#   sh install.sh [PREFIX] [BUNDLE]      PREFIX default ~/.local, BUNDLE the folder holding
#                                         the onnx-designer binary and _internal/
# Copies BUNDLE to PREFIX/lib/onnx-designer, links PREFIX/bin/onnx-designer to it and installs
# the .desktop file (Exec with the absolute path), the icons and the AppStream metadata under
# PREFIX/share. Running it again replaces the previous install.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:-"$HOME/.local"}
if [ $# -ge 2 ]; then
  bundle=$2
elif [ -x "$here/onnx-designer" ] && [ -d "$here/_internal" ]; then
  bundle=$here                      # install.sh inside the bundle (make package puts it there)
else
  bundle="$here/../dist/onnx-designer"   # packaging/install.sh in a checkout
fi
if [ ! -x "$bundle/onnx-designer" ] || [ ! -d "$bundle/_internal/share" ]; then
  echo "install.sh: no app bundle at $bundle; build it with 'make package'" >&2
  exit 1
fi
bundle=$(cd "$bundle" && pwd)
app_id=io.github.onnx_designer.OnnxDesigner
share="$bundle/_internal/share"

mkdir -p "$prefix/lib" "$prefix/bin" "$prefix/share/applications" "$prefix/share/metainfo" \
  "$prefix/share/icons/hicolor/scalable/apps" "$prefix/share/icons/hicolor/256x256/apps"
prefix=$(cd "$prefix" && pwd)
if [ "$bundle" != "$prefix/lib/onnx-designer" ]; then
  rm -rf "$prefix/lib/onnx-designer.new"
  cp -a "$bundle" "$prefix/lib/onnx-designer.new"
  rm -rf "$prefix/lib/onnx-designer"
  mv "$prefix/lib/onnx-designer.new" "$prefix/lib/onnx-designer"
fi
ln -sfn "$prefix/lib/onnx-designer/onnx-designer" "$prefix/bin/onnx-designer"
sed -e "s|^Exec=onnx-designer|Exec=$prefix/bin/onnx-designer|" \
  -e "s|^TryExec=onnx-designer|TryExec=$prefix/bin/onnx-designer|" \
  "$share/applications/$app_id.desktop" >"$prefix/share/applications/$app_id.desktop"
cp "$share/metainfo/$app_id.metainfo.xml" "$prefix/share/metainfo/"
cp "$share/icons/hicolor/scalable/apps/onnx-designer.svg" "$prefix/share/icons/hicolor/scalable/apps/"
cp "$share/icons/hicolor/256x256/apps/onnx-designer.png" "$prefix/share/icons/hicolor/256x256/apps/"
# Menus pick the new entry up at once where these caches exist.
if command -v update-desktop-database >/dev/null 2>&1; then
  update-desktop-database -q "$prefix/share/applications" || echo "install.sh: update-desktop-database failed (the menu shows the entry after the next login)" >&2
fi
if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$prefix/share/icons/hicolor/index.theme" ]; then
  gtk-update-icon-cache -q "$prefix/share/icons/hicolor" || echo "install.sh: gtk-update-icon-cache failed" >&2
fi
echo "installed $prefix/bin/onnx-designer and $prefix/share/applications/$app_id.desktop"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; add it to run onnx-designer from a shell" ;;
esac
