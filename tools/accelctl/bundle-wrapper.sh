#!/bin/sh
# accelctl for an initramfs without a C library: run the real binary
# through the dynamic loader and the libraries shipped next to it, with
# the bundled C.UTF-8 locale where the system has none.
here=$(dirname "$0")
lib=$here/../lib/accelctl
if [ -d "$lib/locale" ] && [ ! -d /usr/lib/locale ]; then
	export LOCPATH="$lib/locale"
fi
for ld in "$lib"/ld-*.so*; do
	exec "$ld" --library-path "$lib" "$here/accelctl.bin" "$@"
done
echo "accelctl: no dynamic loader in $lib" >&2
exit 1
