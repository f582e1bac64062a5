#!/bin/sh
# tests/unit/test_client_consumer.sh BUILD_DIR SOURCE_DIR — install teenyc
# from BUILD_DIR into a temporary prefix, then build two apps against it as
# an outsider would: with CMake (find_package(teenyc) + teeny_add_kernels)
# and with pkg-config (teenyc-client.pc); run both.
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/unit/test_client_consumer" -B "$tmp/app" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DTEENY_KERNEL_FILE="$src/examples/kernels/vector_add.c" >/dev/null
cmake --build "$tmp/app" >/dev/null
out=$("$tmp/app/consumer")
echo "cmake consumer: $out"
[ "$out" = "vector_add__f32__256 vector_add_entry_point" ]
# pkg-config: compile the same app against the generated code.
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
"$tmp/prefix/bin/teenyc-gen" "$src/examples/kernels/vector_add.c" -o "$tmp"
cc -std=c11 -Wall -Wextra -Werror -I"$tmp" $(pkg-config --cflags teenyc-client) \
  "$src/tests/unit/test_client_consumer/app.c" "$tmp/vector_add.teeny.c" \
  -o "$tmp/pc-app" $(pkg-config --libs teenyc-client) -Wl,-rpath,"$tmp/prefix/lib"
out=$("$tmp/pc-app")
echo "pkg-config consumer: $out"
[ "$out" = "vector_add__f32__256 vector_add_entry_point" ]
# The installed tools run from the prefix (rpath $ORIGIN/../lib).
"$tmp/prefix/bin/teenyc" --mode offline "$src/examples/kernels/vector_add.c" \
  -k vector_add -d D=f32 -c BLOCK_SIZE=256 --emit id
"$tmp/prefix/bin/teenyctl" --help >/dev/null
