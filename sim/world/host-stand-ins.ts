/**
 * The recording stand-ins a host script meets in the real shell (real-shell.ts): small POSIX shell
 * scripts put in the sandbox's `/usr/bin` in place of the host tools that act on the machine rather than
 * on its files — `nsenter`, `systemctl`, `poweroff`, `sleep`, … Each appends what it was asked to
 * `REQUESTS_LOG`, which the simulator reads after the run; the files the script changed are read off the
 * tree itself. Everything else (`rm`, `cp`, `echo`, `truncate`, `sh`, `date`, `hostname`, …) is the
 * machine's own binary.
 */

/** Where the stand-ins write what they were asked (a tmpfs of the sandbox, bound from the simulator). */
export const REQUESTS_DIR = '/run/simulator';
export const REQUESTS_LOG = `${REQUESTS_DIR}/requests.log`;

/** Where the machine's own /usr/bin and /usr/sbin are visible in the sandbox (the farm links to them). */
export const HOST_BIN = '/run/host/usr/bin';
export const HOST_SBIN = '/run/host/usr/sbin';

const HEADER = `#!/bin/sh
# A recording stand-in of the vmss-prototype simulator (sim/world/host-stand-ins.ts).
log=${REQUESTS_LOG}
`;

/** Stops the whole sandbox as a powered-off host would: nothing after the power-off runs. */
const POWER_OFF = `echo "power-off $0 $*" >> "$log"
kill -KILL -1 2>/dev/null
exit 0
`;

/**
 * nsenter: accepts util-linux's forms (`-t 1 -m`, `--target=1 --mount`, `-m/proc/1/ns/mnt`,
 * `--mount=/proc/1/ns/mnt`, the other namespaces, `--`), checks that PID 1's mount namespace is entered
 * (else nothing the command does would reach the host's disk) and runs the command in the same root.
 */
const NSENTER = `${HEADER}echo "nsenter $*" >> "$log"
target=
mount=
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -t|--target) target=$2; shift 2 ;;
    --target=*) target=\${1#--target=}; shift ;;
    -t[0-9]*) target=\${1#-t}; shift ;;
    -m/*) mount=\${1#-m}; shift ;;
    --mount=*) mount=\${1#--mount=}; shift ;;
    -m|--mount|-a|--all) mount=target; shift ;;
    --uts|--ipc|--net|--pid|--user|--cgroup|--time|--uts=*|--ipc=*|--net=*|--pid=*|--user=*|--cgroup=*|--time=*) shift ;;
    -F|--no-fork|--preserve-credentials|-r|-w|--root=*|--wd=*) shift ;;
    -S|--setuid|-G|--setgid) shift 2 ;;
    -[muinpUCT]*)
      case "$1" in *m*) mount=target ;; esac
      shift ;;
    -*) echo "nsenter: option $1 is not known to the simulator's nsenter" >&2; exit 1 ;;
    *) break ;;
  esac
done
if [ "$mount" = target ] && [ "$target" = 1 ]; then :
elif [ "$mount" = /proc/1/ns/mnt ]; then :
else
  echo "nsenter: the command does not enter PID 1's mount namespace (-t 1 -m, or -m/proc/1/ns/mnt): nothing it does would reach the host's disk" >&2
  exit 1
fi
if [ $# -eq 0 ]; then
  echo "nsenter: no command to run (the simulator runs no interactive shell)" >&2
  exit 1
fi
exec "$@"
`;

const SYSTEMCTL = `${HEADER}echo "systemctl $*" >> "$log"
verb=
for word in "$@"; do
  case "$word" in -*) ;; *) verb=$word; break ;; esac
done
case "$verb" in
  poweroff|halt) ${POWER_OFF.replaceAll('\n', '\n  ')};;
  is-system-running)
    system=$(cat ${REQUESTS_DIR}/system-state 2>/dev/null || echo running)
    echo "$system"
    [ "$system" = running ] ;;
  is-active) echo active ;;
  stop)
    # A transient unit a script started (systemd-run's stand-in) stops; any other unit: nothing modelled.
    for unit in "$@"; do
      case "$unit" in -*|stop) continue ;; esac
      if [ -f "${REQUESTS_DIR}/units/$unit" ]; then
        rm -f "${REQUESTS_DIR}/units/$unit"
        echo "unit-stop $unit" >> "$log"
      fi
    done ;;
  start|restart|reload|try-restart|enable|disable|mask|unmask|daemon-reload|reset-failed|kill) ;;
  *) echo "systemctl $verb: not modelled by the simulated host (power-off, start/stop/enable/disable and is-system-running are)" >&2; exit 1 ;;
esac
`;

const POWEROFF = `${HEADER}${POWER_OFF}`;

const HALT = `${HEADER}case " $* " in
  *" -p "*|*" --poweroff "*) ;;
  *) echo "halt: only 'halt -p' (power off) is modelled by the simulated host" >&2; exit 1 ;;
esac
${POWER_OFF}`;

const SHUTDOWN = `${HEADER}case " $* " in
  *" -r "*|*" --reboot "*) echo "shutdown: a reboot from a script is not modelled by the simulated host" >&2; exit 1 ;;
esac
${POWER_OFF}`;

/** sleep: simulated time. The simulator adds what was asked to the script's duration; no wall time passes. */
const SLEEP = `${HEADER}for interval in "$@"; do
  case "$interval" in
    ''|*[!0-9.smhd]*) echo "sleep: invalid time interval '$interval'" >&2; exit 1 ;;
  esac
done
echo "sleep $*" >> "$log"
`;

/** date: the world's simulated time (SIMULATED_EPOCH) unless the script names a date itself. */
const DATE = `${HEADER}case " $* " in
  *" -d"*|*" --date"*|*" -r"*|*" --reference"*|*" -f"*|*" --file"*) exec ${HOST_BIN}/date "$@" ;;
esac
exec ${HOST_BIN}/date -d "@\${SIMULATED_EPOCH:-0}" "$@"
`;

/** A reboot from a script is not modelled (the world reboots a VM through the API only). */
const REBOOT = `${HEADER}echo "reboot $*" >> "$log"
echo "reboot: a reboot from a script is not modelled by the simulated host" >&2
exit 1
`;

/** The stand-ins by the name they take in `/usr/bin` (and `/usr/sbin`). */
export const STAND_INS: Readonly<Record<string, string>> = {
  nsenter: NSENTER,
  systemctl: SYSTEMCTL,
  poweroff: POWEROFF,
  halt: HALT,
  shutdown: SHUTDOWN,
  sleep: SLEEP,
  date: DATE,
  reboot: REBOOT,
};

/**
 * Commands a script still needs the modelled host for (host-shell.ts): freezes and transient units over
 * simulated time, `wait`, and a TERM/INT trap in a script that sleeps (the real shell's run lands at once
 * at its end, so a TERM while it sleeps could not run the trap). A script naming any of them runs there;
 * every other script — data disks, mounts and filesystem identifiers included — runs in the real shell.
 */
const MODELLED_COMMAND = /(^|[\s;&|('"`/])(fsfreeze|wait)(?=$|[\s;&|)'"`])/m;
const TERM_TRAP = /(^|[\s;&|])trap\s[^\n]*\b(TERM|INT|SIGTERM|SIGINT)\b/m;
const SLEEP_COMMAND = /(^|[\s;&|('"`/])sleep(?=$|[\s;&|)'"`])/m;

export function needsModelledHost(script: string): boolean {
  return MODELLED_COMMAND.test(script) || (TERM_TRAP.test(script) && SLEEP_COMMAND.test(script));
}
