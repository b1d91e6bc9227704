#!/usr/bin/env bash
# Builds the real-engine test host (tests/real-engine/host, docs/real-engine.md) into .ci/.real-engine/
# (git-ignored) with the machine's .NET SDK: its packages (the WebJobs SDK, the Durable Functions
# extension, the Storage extension) come from NuGet. Run by .ci/run like infra/tools/install-bicep.sh;
# does nothing when the host is newer than its sources.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/tests/real-engine/host"
out="$root/.ci/.real-engine"
dll="$out/bin/RealEngineHost.dll"

if [ -f "$dll" ] && [ -z "$(find "$src" -newer "$dll" -type f | head -1)" ]; then
  echo "real-engine: host up to date in .ci/.real-engine"
  exit 0
fi
if ! command -v dotnet >/dev/null 2>&1; then
  echo "real-engine: the .NET SDK (dotnet) is needed to build tests/real-engine/host" >&2
  exit 1
fi
echo "real-engine: building tests/real-engine/host into .ci/.real-engine (packages from NuGet)"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
dotnet build "$src/RealEngineHost.csproj" -c Release --nologo --verbosity quiet \
  --packages "$out/packages" -o "$out/bin" \
  "-p:MSBuildProjectExtensionsPath=$out/obj/" "-p:BaseIntermediateOutputPath=$out/obj/"
touch "$dll"
echo "real-engine: host built ($dll)"
