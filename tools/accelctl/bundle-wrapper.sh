#!/bin/sh
# accelctl for an initramfs without a C library: run the real binary
# through the dynamic loader and the libraries shipped next to it.
here=$(dirname "$0")
lib=$here/../lib/accelctl
for ld in "$lib"/ld-*.so*; do
	exec "$ld" --library-path "$lib" "$here/accelctl.bin" "$@"
done
echo "accelctl: no dynamic loader in $lib" >&2
exit 1
