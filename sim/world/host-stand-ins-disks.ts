/**
 * The real shell's stand-ins for the host tools that act on block devices, freezes and transient units
 * (`mount`, `umount`, `blkid`, `findmnt`, `tune2fs`, `xfs_admin`, `sfdisk --part-uuid`, `fsfreeze`,
 * `systemd-run`): small POSIX shell scripts in the sandbox's `/usr/bin` that answer from, and write
 * into, the host's device state the simulator writes out beside the root tree (real-shell-disks.ts) and
 * reads back after the run. They keep the modelled host's rules (host-commands.ts): the same devices
 * (`/dev/disk/azure/scsi1/lun<N>[-part<P>]`), the same refusals with the real tools' messages.
 *
 * `mount` binds the data disk's tree at the mount point for real, in the sandbox's own mount namespace
 * (bubblewrap grants CAP_SYS_ADMIN there), so a script reads and removes the copy's files with the
 * machine's own tools; `umount` undoes the bind.
 */
import { HOST_BIN, REQUESTS_DIR, REQUESTS_LOG } from './host-stand-ins.js';

/** Where the host's device state is, in the sandbox (under the stand-ins' request directory). */
export const DEVICES_DIR = REQUESTS_DIR;

const HEX4 = '[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F]';
const GUID_PATTERN = `${HEX4}${HEX4}-${HEX4}-${HEX4}-${HEX4}-${HEX4}${HEX4}${HEX4}`;

/** Helpers every device stand-in starts with. */
const LIBRARY = `#!/bin/sh
# A stand-in of the vmss-prototype simulator (sim/world/host-stand-ins-disks.ts).
log=${REQUESTS_LOG}
state=${DEVICES_DIR}
fail() { status=$1; shift; echo "$*" >&2; exit "$status"; }
# device PATH: sets lun, part (empty for the whole disk) and disk (its state directory).
device() {
  case "$1" in
    /dev/disk/azure/scsi1/lun[0-9]*) ;;
    *) fail 2 "$1: not a data disk device of the simulated host (/dev/disk/azure/scsi1/lun<N>[-part<P>])" ;;
  esac
  rest=\${1#/dev/disk/azure/scsi1/lun}
  lun=\${rest%%-part*}
  part=
  [ "$lun" = "$rest" ] || part=\${rest#*-part}
  case "$lun" in ''|*[!0-9]*) fail 2 "$1: not a data disk device of the simulated host" ;; esac
  case "$part" in *[!0-9]*) fail 2 "$1: not a data disk device of the simulated host" ;; esac
  lun=$((lun + 0))
  disk=$state/disks/lun$lun
  [ -d "$disk" ] || fail 2 "$1: No such file or directory (no disk at LUN $lun)"
}
get() { sed -n "s/^$1=//p" "$disk/filesystem" 2>/dev/null; }
root_get() { sed -n "s/^$1=//p" "$state/root-filesystem" 2>/dev/null; }
put() {
  grep -v "^$1=" "$disk/filesystem" > "$disk/filesystem.new"
  [ -z "$2" ] || echo "$1=$2" >> "$disk/filesystem.new"
  mv "$disk/filesystem.new" "$disk/filesystem"
}
# The partition device carries the disk's (root) filesystem.
has_filesystem() { [ -n "$part" ] && [ -f "$disk/filesystem" ] && [ "$(get partition)" = "$part" ]; }
mounted_lun() { while read -r l t; do [ "$t" = "$1" ] && { echo "$l"; return 0; }; done < "$state/mounts"; return 1; }
mount_point() { while read -r l t; do [ "$l" = "$1" ] && { echo "$t"; return 0; }; done < "$state/mounts"; return 1; }
lower() { echo "$1" | tr A-F a-f; }
`;

const MOUNT = `${LIBRARY}echo "mount $*" >> "$log"
options=
if [ "$1" = -o ]; then options=$2; shift 2; fi
[ $# -eq 2 ] || fail 1 "mount: only 'mount [-o nouuid|rw|ro] DEVICE DIR' is modelled by the simulated host"
source=$1
target=$2
for option in $(echo "$options" | tr , ' '); do
  case "$option" in nouuid|rw|ro) ;; *) fail 1 "mount: option $option is not modelled by the simulated host" ;; esac
done
case "$target" in /*) ;; *) fail 1 "mount: $target: not an absolute path" ;; esac
device "$source"
has_filesystem || fail 32 "mount: $source: wrong fs type, bad option, bad superblock, missing codepage or helper program, or other error"
mounted_lun "$target" > /dev/null && fail 32 "mount: $target: already mounted"
mount_point "$lun" > /dev/null && fail 32 "mount: $source: already mounted"
nouuid=no
case ",$options," in *,nouuid,*) nouuid=yes ;; esac
type=$(get type)
if [ "$type" = ext4 ] && [ $nouuid = yes ]; then
  fail 32 "mount: $target: wrong fs type, bad option (ext4: unrecognized mount option \\"nouuid\\")"
fi
if [ "$type" = xfs ] && [ $nouuid = no ] && [ "$(root_get type)" = xfs ] && [ "$(root_get uuid)" = "$(get uuid)" ]; then
  fail 32 "mount: $target: wrong fs type (XFS: Filesystem has duplicate UUID $(get uuid) - can't mount)"
fi
[ -d "$target" ] || fail 32 "mount: $target: mount point does not exist."
${HOST_BIN}/mount --bind "$disk/tree" "$target" || fail 32 "mount: $target: the simulator could not bind the disk's tree (bubblewrap grants CAP_SYS_ADMIN only to root)"
# Mounting replays a crash-consistent copy's journal.
put recovery ''
echo "$lun $target" >> "$state/mounts"
`;

const UMOUNT = `${LIBRARY}echo "umount $*" >> "$log"
[ $# -eq 1 ] || fail 1 "umount: only 'umount DIR' is modelled by the simulated host"
mounted_lun "$1" > /dev/null || fail 32 "umount: $1: not mounted"
${HOST_BIN}/umount "$1" || exit 32
while read -r l t; do [ "$t" = "$1" ] || echo "$l $t"; done < "$state/mounts" > "$state/mounts.new"
mv "$state/mounts.new" "$state/mounts"
`;

const BLKID = `${LIBRARY}tag=
output=
while [ $# -gt 1 ]; do
  case "$1" in
    -s) tag=$2; shift 2 ;;
    -o) output=$2; shift 2 ;;
    *) break ;;
  esac
done
case "$tag" in UUID) key=uuid ;; LABEL) key=label ;; PARTUUID) key=partUuid ;; TYPE) key=type ;; *) key= ;; esac
if [ $# -ne 1 ] || [ "$output" != value ] || [ -z "$key" ]; then
  fail 2 "blkid: only 'blkid -s UUID|LABEL|PARTUUID|TYPE -o value DEVICE' is modelled by the simulated host"
fi
device "$1"
has_filesystem || exit 2
value=$(get $key)
# blkid prints nothing and answers 2 for a tag the device does not have (an empty label).
[ -n "$value" ] || exit 2
echo "$value"
`;

const FINDMNT = `${LIBRARY}columns=
while [ $# -gt 1 ]; do
  case "$1" in
    -no) columns=$2; shift 2 ;;
    -n) shift ;;
    -o) columns=$2; shift 2 ;;
    *) break ;;
  esac
done
case "$columns" in UUID) key=uuid ;; LABEL) key=label ;; PARTUUID) key=partUuid ;; *) key= ;; esac
if [ $# -ne 1 ] || [ -z "$key" ]; then
  fail 1 "findmnt: only 'findmnt -no UUID|LABEL|PARTUUID TARGET' is modelled by the simulated host"
fi
if [ "$1" = / ]; then
  [ -f "$state/root-filesystem" ] || exit 1
  root_get $key
  exit 0
fi
lun=$(mounted_lun "$1") || exit 1
disk=$state/disks/lun$lun
get $key
`;

function identifiers(tool: 'tune2fs' | 'xfs_admin'): string {
  const type = tool === 'tune2fs' ? 'ext4' : 'xfs';
  const longest = tool === 'tune2fs' ? 16 : 12;
  return `${LIBRARY}tool=${tool}
echo "$tool $*" >> "$log"
set_uuid=no
set_label=no
while [ $# -gt 1 ]; do
  case "$1" in
    -U) uuid=$2; set_uuid=yes; shift 2 ;;
    -L) label=$2; set_label=yes; shift 2 ;;
    *) fail 1 "$tool: only -U UUID and -L LABEL are modelled by the simulated host" ;;
  esac
done
if [ $# -ne 1 ] || { [ $set_uuid = no ] && [ $set_label = no ]; }; then
  fail 1 "$tool: only '$tool -U UUID [-L LABEL] DEVICE' is modelled by the simulated host"
fi
device "$1"
has_filesystem || fail 1 "$tool: Bad magic number in super-block"
[ "$(get type)" = ${type} ] || fail 1 "$tool: $1: not an ${type} filesystem (Bad magic number in super-block)"
mount_point "$lun" > /dev/null && fail 1 "$tool: the UUID may only be changed when the filesystem is unmounted"
[ "$(get recovery)" = true ] && fail 1 "$tool: the filesystem's journal needs recovery; mount it once (or run e2fsck/xfs_repair) first"
if [ $set_uuid = yes ]; then
  case "$uuid" in ${GUID_PATTERN}) ;; *) fail 1 "$tool: Invalid UUID format: $uuid" ;; esac
fi
if [ $set_label = yes ] && [ \${#label} -gt ${longest} ]; then fail 1 "$tool: label $label is too long"; fi
[ $set_uuid = no ] || put uuid "$(lower "$uuid")"
if [ $set_label = yes ]; then
  put label ''
  [ -z "$label" ] || echo "label=$label" >> "$disk/filesystem"
fi
`;
}

const SFDISK = `${LIBRARY}if [ $# -ne 4 ] || [ "$1" != --part-uuid ]; then
  fail 1 "sfdisk: only 'sfdisk --part-uuid DISK N UUID' is modelled by the simulated host"
fi
echo "sfdisk $*" >> "$log"
device "$2"
[ -z "$part" ] || fail 1 "sfdisk: $2: not a whole disk"
if [ ! -f "$disk/filesystem" ] || [ "$(get partition)" != "$3" ]; then
  fail 1 "sfdisk: $2: partition $3: partition not found"
fi
case "$4" in ${GUID_PATTERN}) ;; *) fail 1 "sfdisk: $4: failed to parse UUID" ;; esac
put partUuid "$(lower "$4")"
`;

/** `fsfreeze`: the host's root freezes and thaws at the script's simulated offset (`sleep` advances it). */
const FSFREEZE = `${LIBRARY}[ $# -eq 2 ] || fail 1 "fsfreeze: only 'fsfreeze --freeze|--unfreeze /' is modelled by the simulated host"
[ "$2" = / ] || fail 1 "fsfreeze: $2: only / is modelled"
case "$1" in
  -f|--freeze)
    [ -f "$state/frozen" ] && fail 1 "fsfreeze: /: freeze failed: Device or resource busy"
    : > "$state/frozen"
    echo "freeze $(cat "$state/offset" 2>/dev/null || echo 0)" >> "$log" ;;
  -u|--unfreeze)
    [ -f "$state/frozen" ] || fail 1 "fsfreeze: /: unfreeze failed: Invalid argument"
    rm -f "$state/frozen"
    echo "thaw $(cat "$state/offset" 2>/dev/null || echo 0)" >> "$log" ;;
  *) fail 1 "fsfreeze: only --freeze and --unfreeze are modelled by the simulated host" ;;
esac
`;

/** `systemd-run`: a transient timer that runs a command once, or a service with an ExecStop (host-runtime.ts runs them). */
const SYSTEMD_RUN = `${LIBRARY}unit=
seconds=
remain=no
exec_stop=
runtime=
property() {
  case "$1" in
    ExecStop=?*) exec_stop=\${1#ExecStop=} ;;
    RuntimeMaxSec=?*) runtime=\${1#RuntimeMaxSec=} ;;
    *) fail 1 "systemd-run: property $1 is not modelled by the simulated host (ExecStop, RuntimeMaxSec)" ;;
  esac
}
while [ $# -gt 0 ]; do
  case "$1" in
    --quiet) shift ;;
    --remain-after-exit) remain=yes; shift ;;
    -p|--property) property "$2"; shift 2 ;;
    --property=*) property "\${1#--property=}"; shift ;;
    --unit=*) unit=\${1#--unit=}; shift ;;
    --on-active=*) seconds=\${1#--on-active=}; seconds=\${seconds%s}; shift ;;
    -*) fail 1 "systemd-run: option $1 is not modelled by the simulated host" ;;
    *) break ;;
  esac
done
case "$unit" in ''|*[!A-Za-z0-9@_.-]*) fail 1 "systemd-run: --unit=NAME is required by the simulated host" ;; esac
case "$seconds$runtime" in *[!0-9]*) fail 1 "systemd-run: only whole seconds are modelled" ;; esac
[ $# -gt 0 ] || fail 1 "systemd-run: no command"
mkdir -p "$state/units"
if [ -n "$seconds" ]; then
  [ $remain = no ] && [ -z "$exec_stop$runtime" ] || fail 1 "systemd-run: a timer (--on-active) takes no service options in the simulated host"
  name=$unit.timer
  [ -e "$state/units/$name" ] && fail 1 "Failed to start transient unit: Unit $name already exists."
  printf 'kind=timer\\nseconds=%s\\ncommand=%s\\n' "$seconds" "$*" > "$state/units/$name"
else
  [ $remain = yes ] && [ "$*" = true ] || fail 1 "systemd-run: only a timer (--on-active) or a --remain-after-exit service running 'true' is modelled by the simulated host"
  name=$unit.service
  [ -e "$state/units/$name" ] && fail 1 "Failed to start transient unit: Unit $name already exists."
  {
    echo kind=service
    [ -z "$exec_stop" ] || echo "execStop=$exec_stop"
    [ -z "$runtime" ] || echo "runtimeMaxSeconds=$runtime"
  } > "$state/units/$name"
fi
echo "systemd-run $name" >> "$log"
`;

/** The device stand-ins by the name they take in `/usr/bin` and `/usr/sbin`. */
export const DEVICE_STAND_INS: Readonly<Record<string, string>> = {
  mount: MOUNT,
  umount: UMOUNT,
  blkid: BLKID,
  findmnt: FINDMNT,
  tune2fs: identifiers('tune2fs'),
  xfs_admin: identifiers('xfs_admin'),
  sfdisk: SFDISK,
  fsfreeze: FSFREEZE,
  'systemd-run': SYSTEMD_RUN,
};
