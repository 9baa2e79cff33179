#!/usr/bin/env bash
# Unpacks Debian 12's munge and Slurm packages (apt-get download'ed into DEBDIR with the libraries
# they link) on a machine where apt cannot install them: a GPU test box of another distribution,
# run as root. Slurm's and munge's usr/ trees go to /usr, as their packages would put them (their
# compiled-in paths: /usr/sbin/slurmstepd, /usr/lib/x86_64-linux-gnu/slurm-wlm); a library goes in only where the
# system lacks its soname (the system's own copies are never replaced). Then the names the
# packages' postinst scripts would have made (update-alternatives: slurmctld -> slurmctld-wlm).
#   usage: tools/slurm/unpack-debs.sh DEBDIR
#   DEBDIR: munge libmunge2 slurmctld slurmd slurm-client slurm-wlm-basic-plugins, and
#           libhwloc15 libjson-c5 liblua5.1-0 liblz4-1 libnuma1 libreadline8 libyaml-0-2, and
#           libdbus-1-3 (cgroup_v2.so, for device cgroups; put in only where the system lacks it)
set -euo pipefail
debs=${1:?usage: unpack-debs.sh DEBDIR}
[[ $(id -u) -eq 0 ]] || { echo "unpack-debs: run as root" >&2; exit 1; }
libdir=/usr/lib/x86_64-linux-gnu
tmp=$(mktemp -d)
# The directories the loader's cache knows now: a plain ldconfig would forget those that were
# added once by hand (a compiler under /opt), and break that compiler.
known_dirs=$(ldconfig -p | awk -F'=> ' 'NF > 1 {print $2}' | xargs -r -n1 dirname | sort -u)
trap 'rm -rf "$tmp"' EXIT
for deb in "$debs"/*.deb; do
  name=$(dpkg-deb -f "$deb" Package)
  case $name in
    munge | libmunge2 | slurm*)
      # Only their usr/ tree, copied in: extracting onto / would replace a merged-usr system's
      # /lib symbolic link with munge's lib/systemd directory.
      dpkg -x "$deb" "$tmp/$name"
      cp -a "$tmp/$name/usr/." /usr/
      ;;
    lib*)
      dpkg -x "$deb" "$tmp/$name"
      for so in "$tmp/$name$libdir"/*.so.*; do
        [[ -e $so ]] || continue
        soname=$(basename "$so")
        ldconfig -p | grep -q "^[[:space:]]*$soname " || [[ -e $libdir/$soname ]] || cp -a "$so" "$libdir/"
      done
      ;;
  esac
done
for b in slurmctld slurmd slurmstepd; do
  [[ -e /usr/sbin/$b-wlm && ! -e /usr/sbin/$b ]] && ln -s "$b-wlm" "/usr/sbin/$b"
done
for b in sbatch squeue sinfo scontrol scancel srun sacct; do
  [[ -e /usr/bin/$b-wlm && ! -e /usr/bin/$b ]] && ln -s "$b-wlm" "/usr/bin/$b"
done
# shellcheck disable=SC2086
ldconfig $known_dirs
missing=$(for f in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/slurmstepd /usr/sbin/munged /usr/bin/sbatch; do
  ldd "$f" 2>/dev/null | awk '/not found/ {print $1}'; done | sort -u | tr '\n' ' ')
[[ -z $missing ]] || { echo "unpack-debs: still missing: $missing" >&2; exit 1; }
echo "unpack-debs: $(munged --version 2>&1 | head -1), $(slurmd -V 2>&1)"
