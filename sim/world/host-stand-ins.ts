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
/** The script's simulated offset in whole seconds (`sleep` advances it). */
export const OFFSET_FILE = `${REQUESTS_DIR}/offset`;

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

/**
 * sleep: simulated time. The simulator adds what was asked to the script's duration; no wall time passes.
 * It also keeps the script's simulated offset (whole seconds, in OFFSET_FILE: a sleep ends at its start
 * plus its interval, in the background too) and carries out a staged run's instructions: with
 * SIMULATED_STOP_AT the sandbox stops where a sleep would pass that offset (the host as it is then); with
 * SIMULATED_TERM_AT the kubelet's TERM reaches the shell there — at once in `wait` (a background sleep),
 * when it ends for a foreground one, as sh runs traps.
 */
const SLEEP = `${HEADER}for interval in "$@"; do
  case "$interval" in
    ''|*[!0-9.smhd]*) echo "sleep: invalid time interval '$interval'" >&2; exit 1 ;;
  esac
done
echo "sleep $*" >> "$log"
offset_file=${OFFSET_FILE}
start=$(cat "$offset_file" 2>/dev/null || echo 0)
end=$start
for interval in "$@"; do
  number=\${interval%[smhd]}
  whole=\${number%%.*}
  case "\${interval#"$number"}" in
    m) whole=$((\${whole:-0} * 60)) ;;
    h) whole=$((\${whole:-0} * 3600)) ;;
    d) whole=$((\${whole:-0} * 86400)) ;;
  esac
  end=$((end + \${whole:-0}))
done
if [ -n "\${SIMULATED_STOP_AT:-}" ] && [ "$end" -gt "$SIMULATED_STOP_AT" ]; then
  echo "stop $SIMULATED_STOP_AT" >> "$log"
  kill -KILL -1 2>/dev/null
  exit 0
fi
if [ -n "\${SIMULATED_TERM_AT:-}" ] && [ "$end" -gt "$SIMULATED_TERM_AT" ] && [ ! -e "$offset_file.term" ]; then
  : > "$offset_file.term"
  # A background job ignores SIGINT (sh without job control): the shell waits for it in \`wait\`.
  case "$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)" in
    *[2367abefABEF]) end=$SIMULATED_TERM_AT ;;
  esac
  [ "$end" -gt "$(cat "$offset_file" 2>/dev/null || echo 0)" ] && echo "$end" > "$offset_file"
  echo "term $end" >> "$log"
  kill -TERM $PPID
  exit 0
fi
[ "$end" -gt "$(cat "$offset_file" 2>/dev/null || echo 0)" ] && echo "$end" > "$offset_file"
exit 0
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

const TERM_TRAP = /(^|[\s;&|])trap\s[^\n]*\b(TERM|INT|SIGTERM|SIGINT)\b/m;
const SLEEP_COMMAND = /(^|[\s;&|('"`/])sleep(?=$|[\s;&|)'"`])/m;

/**
 * Whether a pod's script runs in stages over simulated time (staged-run.ts): it sets a TERM/INT trap and
 * sleeps, so a graceful deletion while it sleeps must run the trap (live capture's freeze pod).
 */
export function runsInStages(script: string): boolean {
  return TERM_TRAP.test(script) && SLEEP_COMMAND.test(script);
}
