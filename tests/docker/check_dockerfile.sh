#!/usr/bin/env bash
# Keeps docker/Dockerfile honest without a container engine (scripts/container-check builds and runs it with
# podman): its build stage must run the commands CI runs (scripts/setup, scripts/build release), its
# runtime-prebuilt target must copy the same binaries from a context laid out as build/, the binaries it copies must
# be the ones the build makes, and its runtime stage must install the package of every shared library the
# binaries load, and no library package that none of them loads.
set -euo pipefail
root=$1
build=$2
dockerfile="$root/docker/Dockerfile"
fail() { echo "check_dockerfile: $*" >&2; exit 1; }

grep -q '^RUN bash scripts/setup$' "$dockerfile" || fail "the build stage does not run scripts/setup"
grep -q '^RUN bash scripts/build release$' "$dockerfile" || fail "the build stage does not run scripts/build release"
grep -q '^FROM debian:bookworm-slim' "$dockerfile" || fail "the runtime stage is not debian:bookworm-slim"
grep -q '^USER ' "$dockerfile" || fail "no non-root USER"
grep -q '^HEALTHCHECK' "$dockerfile" || fail "no HEALTHCHECK"
grep -q '^ENTRYPOINT \["' "$dockerfile" || fail "ENTRYPOINT is not in exec form"
grep -q '^STOPSIGNAL SIGTERM$' "$dockerfile" || fail "STOPSIGNAL is not SIGTERM"
grep -q '^ENV GLIBC_TUNABLES=glibc.malloc.hugetlb=1$' "$dockerfile" || fail "the heap is not asked onto huge pages"
grep -q '^FROM debian:bookworm AS build$' "$dockerfile" || fail "no build stage"
grep -q '^FROM debian:bookworm-slim AS runtime-base$' "$dockerfile" || fail "no runtime-base stage"
grep -q '^FROM runtime-base AS runtime-prebuilt$' "$dockerfile" || fail "no runtime-prebuilt stage"
[ "$(grep '^FROM ' "$dockerfile" | tail -n 1)" = "FROM runtime-base AS runtime" ] ||
    fail "the last stage (the default target) is not 'FROM runtime-base AS runtime'"
# Both targets must install the same binaries at the same places: runtime from the build stage's build/,
# runtime-prebuilt from the context's build/.
runtime_binaries=$(grep '^COPY --from=build /src/build/' "$dockerfile" | awk '{print substr($3, 6), $4}' | sort)
prebuilt_binaries=$(grep '^COPY build/' "$dockerfile" | awk '{print $2, $3}' | sort)
[ "$runtime_binaries" = "$prebuilt_binaries" ] ||
    fail "runtime-prebuilt copies '$(echo $prebuilt_binaries)', runtime '$(echo $runtime_binaries)'"
listed=$(grep -o 'lib[a-z0-9.+-]*' "$dockerfile" | sort -u)
# The packages the runtime stage's apt-get install names.
installed=$(sed -n '/apt-get install/,/&&.*rm -rf/p' "$dockerfile" | tr -s ' \\' '\n\n' |
    grep -v -e '^-' -e '^&&' -e '^apt-get' -e '^install$' -e '^rm$' -e '^/' -e '^$' | sort -u)
[ -n "$installed" ] || fail "no apt-get install in the runtime stage"
loaded_packages=""
declare -A depends # candidate package -> what `apt-cache depends --recurse` says of it
for binary in $(grep -o 'COPY --from=build /src/build/[^ ]*' "$dockerfile" | sed 's|COPY --from=build /src/build/||'); do
    [ -x "$build/$binary" ] || fail "the Dockerfile copies build/$binary, which the build does not make"
    for library in $(ldd "$build/$binary" | awk '/=>/ {print $3}'); do
        package=$(dpkg -S "$(readlink -f "$library")" 2>/dev/null | head -n 1 | cut -d: -f1) || true
        [ -n "$package" ] || package=$(dpkg -S "$library" 2>/dev/null | head -n 1 | cut -d: -f1) || true
        [ -n "$package" ] || continue
        loaded_packages+=" $package"
        case "$package" in
        libc6 | libgcc-s1 | libstdc++6 | zlib1g) continue ;; # in debian:bookworm-slim already
        esac
        # Packages pulled in by those the Dockerfile installs count too (libssl3 comes with cpp-httplib).
        # apt-cache's output is read whole before it is searched: `apt-cache | grep -q` would let grep
        # exit at the first match and apt-cache die of SIGPIPE, which pipefail turns into "no match".
        covered=no
        for candidate in $listed; do
            if [ -z "${depends[$candidate]+set}" ]; then
                depends[$candidate]=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
                    --no-breaks --no-replaces --no-enhances "$candidate" 2>/dev/null || true)
            fi
            if [ "$candidate" = "$package" ] || grep -qx "  Depends: $package" <<<"${depends[$candidate]}"; then
                covered=yes
                break
            fi
        done
        [ "$covered" = yes ] || fail "$binary loads $library (package $package), which the runtime stage does not install"
    done
done
# And nothing more: every package installed is one a binary loads a library of (small image, small surface).
for package in $installed; do
    grep -qw -- "$package" <<<"$loaded_packages" ||
        fail "the runtime stage installs $package, which no binary it copies loads (ldd)"
done
echo "check_dockerfile: ok"
