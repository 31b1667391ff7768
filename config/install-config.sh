#!/bin/sh
# meson install step for memd.yaml: the operator's config survives an upgrade. A fresh
# install gets the shipped file; when one is there already and differs, the shipped
# version is put beside it as memd.yaml.new (like dpkg's .dpkg-dist) and left to merge.
# usage: install-config.sh SHIPPED_MEMD_YAML DIR     (DIR is absolute; $DESTDIR applies)
set -eu
src=$1
dir=${DESTDIR:-}$2
[ -z "${MESON_INSTALL_DRY_RUN:-}" ] || { echo "would install $src into $dir"; exit 0; }
mkdir -p "$dir"
if [ ! -e "$dir/memd.yaml" ]; then
    install -m 0644 "$src" "$dir/memd.yaml"
    echo "Installing $src to $dir"
elif ! cmp -s "$src" "$dir/memd.yaml"; then
    install -m 0644 "$src" "$dir/memd.yaml.new"
    echo "Keeping $dir/memd.yaml (changed locally); the shipped one is $dir/memd.yaml.new"
fi
