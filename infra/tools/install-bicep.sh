#!/usr/bin/env bash
# Installs the Bicep CLI pinned in infra/tools/bicep-cli.csproj into .ci/.bicep/ (git-ignored), where
# tests/infra/ looks for it: `dotnet restore` downloads the package's self-contained `bicep` binary from
# the machine's NuGet source. npm test itself never reaches the network. Run by .ci/run and by
# `npm run bicep:install`; does nothing when that version is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
project="$root/infra/tools/bicep-cli.csproj"
cache="$root/.ci/.bicep"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) runtime=linux-x64 ;;
  Linux-aarch64 | Linux-arm64) runtime=linux-arm64 ;;
  Darwin-x86_64) runtime=osx-x64 ;;
  Darwin-arm64) runtime=osx-arm64 ;;
  *)
    echo "bicep: no Bicep CLI package for $(uname -s) $(uname -m)" >&2
    exit 1
    ;;
esac
version="$(sed -n 's:.*<BicepVersion>\(.*\)</BicepVersion>.*:\1:p' "$project")"
binary="$cache/packages/azure.bicep.commandline.$runtime/$version/tools/bicep"

if [ -x "$binary" ] && installed="$("$binary" --version 2>/dev/null)"; then
  echo "bicep: $installed already installed in .ci/.bicep"
  exit 0
fi
if ! command -v dotnet >/dev/null 2>&1; then
  echo "bicep: the .NET SDK (dotnet) is needed to download Azure.Bicep.CommandLine.$runtime $version from NuGet" >&2
  exit 1
fi
echo "bicep: downloading Azure.Bicep.CommandLine.$runtime $version from NuGet into .ci/.bicep"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
dotnet restore "$project" --packages "$cache/packages" --verbosity quiet \
  "-p:BicepRuntime=$runtime" "-p:MSBuildProjectExtensionsPath=$cache/obj/"
chmod u+x "$binary"
echo "bicep: installed $("$binary" --version)"
