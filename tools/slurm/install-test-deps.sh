#!/usr/bin/env bash
# The Debian 12 packages of the Slurm test (tests/slurm): munge and a single-node Slurm
# (slurmctld, slurmd, the client commands). CI only: students' tools/install-deps.sh does not pull
# Slurm, and a cluster has its own. Idempotent; run as root (or through sudo). The packages'
# services are not started here (the test starts its own daemons on free ports).
set -euo pipefail
packages=(munge slurmctld slurmd slurm-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-test-deps: Slurm test packages already installed"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then exec sudo "$0" "$@"; fi
  echo "install-test-deps: need root to install: ${missing[*]} (the Slurm test will skip)" >&2
  exit 0
fi
echo "install-test-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The packages' services must not start (no configuration yet; the test starts its own daemons):
# deny service starts during the install, as Debian's container images do with policy-rc.d.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" || {
  echo "install-test-deps: apt-get install failed: the Slurm test will skip" >&2
  exit 0
}
