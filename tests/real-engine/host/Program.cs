// The real-engine test host (docs/real-engine.md). Hosts the WebJobs SDK with the Durable Functions
// extension (DurableTask 3.19, Azure Storage backend on Azurite) the way the extension's own tests do
// (test/FunctionsV2/PlatformSpecificHelpers.FunctionsV2.cs), and registers, for every orchestrator and
// activity name in the manifest the Node bridge wrote, a proxy function of the out-of-process shape:
// `[OrchestrationTrigger] string` (the extension then replays the returned actions through its
// OutOfProcOrchestrationShim, with FUNCTIONS_WORKER_RUNTIME=node the protocol durable-functions 3.x
// speaks) and `[ActivityTrigger] JToken`. Each proxy posts its JSON to the Node bridge on 127.0.0.1 and
// hands back what the app's own handler returned; a failed orchestrator comes back as the worker's
// RpcException text (Result/Exception/Stack), which the extension parses for `$OutOfProcData$`.
//
// Usage: RealEngineHost <manifest.json>. Manifest: { bridgeUrl, storage, hubName, orchestrators[],
// activities[], clientFile }. Once started, the durable client binding's JSON (the extension's local RPC
// endpoint, which the bridge's durable-functions client calls) is written to clientFile and the line
// "real-engine: ready" to stdout.
using System.Reflection;
using System.Reflection.Emit;
using System.Text;
using Microsoft.Azure.WebJobs;
using Microsoft.Azure.WebJobs.Extensions.DurableTask;
using Microsoft.Azure.WebJobs.Host.Config;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Newtonsoft.Json.Linq;

namespace RealEngineHost;

public static class Bridge
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromMinutes(10) };
    public static string Url = "";
    public static string ClientJson = "";

    private static async Task<JObject> Post(string path, JObject body)
    {
        using var content = new StringContent(body.ToString(Newtonsoft.Json.Formatting.None), Encoding.UTF8, "application/json");
        using var response = await Http.PostAsync(Url + path, content).ConfigureAwait(false);
        string text = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"bridge {path}: HTTP {(int)response.StatusCode}: {text}");
        }
        return JObject.Parse(text);
    }

    /// <summary>The Node worker's failure as the Functions host's RpcException words it.</summary>
    private static Exception WorkerFailure(JObject reply) =>
        new InvalidOperationException(
            $"Result: Failure\nException: {(string)reply["error"]}\nStack: {(string)reply["stack"] ?? ""}");

    public static async Task<string> Orchestrate(string name, string context)
    {
        JObject reply = await Post("/orchestrate", new JObject { ["name"] = name, ["context"] = context }).ConfigureAwait(false);
        if ((bool)reply["ok"]) return (string)reply["state"];
        throw WorkerFailure(reply);
    }

    public static async Task<JToken> Activity(string name, JToken input)
    {
        JObject reply = await Post("/activity", new JObject { ["name"] = name, ["input"] = input }).ConfigureAwait(false);
        if ((bool)reply["ok"])
        {
            JToken output = reply["output"];
            return output == null || output.Type == JTokenType.Null || output.Type == JTokenType.Undefined ? null : output;
        }
        throw WorkerFailure(reply);
    }
}

/// <summary>Reads the durable client binding once, as a Node function's extra input would.</summary>
public static class ClientFunctions
{
    [FunctionName("realEngineClient")]
    [NoAutomaticTrigger]
    public static void ReadClient([DurableClient] string client)
    {
        Bridge.ClientJson = client;
    }
}

public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: RealEngineHost <manifest.json>");
            return 2;
        }
        JObject manifest = JObject.Parse(File.ReadAllText(args[0]));
        Bridge.Url = (string)manifest["bridgeUrl"];
        string hubName = (string)manifest["hubName"];
        string[] orchestrators = manifest["orchestrators"].ToObject<string[]>();
        string[] activities = manifest["activities"].ToObject<string[]>();
        string pollSeconds = (string)manifest["maxQueuePollingInterval"] ?? "00:00:01";

        // What the extension reads to choose the out-of-process protocol (DurableTaskExtension ctor).
        Environment.SetEnvironmentVariable("FUNCTIONS_WORKER_RUNTIME", "node");
        Environment.SetEnvironmentVariable("AzureWebJobsStorage", (string)manifest["storage"]);

        Type proxies = EmitProxies(orchestrators, activities);
        var locator = new ExplicitTypeLocator(proxies, typeof(ClientFunctions));

        IHost host = new HostBuilder()
            .ConfigureAppConfiguration(config => config.AddInMemoryCollection(new Dictionary<string, string>
            {
                ["AzureWebJobsStorage"] = (string)manifest["storage"],
            }))
            .ConfigureLogging(logging =>
            {
                logging.AddSimpleConsole(o => { o.SingleLine = true; o.TimestampFormat = "HH:mm:ss.fff "; });
                logging.SetMinimumLevel(LogLevel.Warning);
                logging.AddFilter("RealEngineHost", LogLevel.Information);
            })
            .ConfigureWebJobs(webJobs =>
            {
                webJobs.AddDurableTask(options =>
                {
                    options.HubName = hubName;
                    options.LocalRpcEndpointEnabled = true;
                    options.ExtendedSessionsEnabled = false;
                    options.MaxConcurrentActivityFunctions = 8;
                    options.MaxConcurrentOrchestratorFunctions = 8;
                    options.StorageProvider["ConnectionName"] = "AzureWebJobsStorage";
                    options.StorageProvider["maxQueuePollingInterval"] = pollSeconds;
                    options.StorageProvider["partitionCount"] = 1;
                    // A killed host's control-queue messages come back this soon, and its lease expires.
                    options.StorageProvider["controlQueueVisibilityTimeout"] = "00:01:00";
                    options.StorageProvider["workItemQueueVisibilityTimeout"] = "00:01:00";
                    options.StorageProvider["UseLegacyPartitionManagement"] = true;
                });
            })
            .ConfigureServices(services =>
            {
                services.AddSingleton<ITypeLocator>(locator);
                services.AddSingleton<IWebHookProvider, LoopbackWebHooks>();
            })
            .Build();

        await host.StartAsync().ConfigureAwait(false);
        var jobHost = (JobHost)host.Services.GetRequiredService<IJobHost>();
        await jobHost.CallAsync("realEngineClient").ConfigureAwait(false);
        File.WriteAllText((string)manifest["clientFile"], Bridge.ClientJson);
        Console.WriteLine("real-engine: ready");

        var stopped = new TaskCompletionSource();
        Console.CancelKeyPress += (_, e) => { e.Cancel = true; stopped.TrySetResult(); };
        AppDomain.CurrentDomain.ProcessExit += (_, _) => stopped.TrySetResult();
        // The bridge ends the host by closing its stdin.
        _ = Task.Run(() => { while (Console.In.ReadLine() != null) { } stopped.TrySetResult(); });
        await stopped.Task.ConfigureAwait(false);
        // Bounded: an orchestrator blocked on a bridge that is gone must not keep the process alive.
        try { await host.StopAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false); }
        catch (OperationCanceledException) { }
        Environment.Exit(0);
        return 0;
    }

    /// <summary>One static class with a proxy method per name, each calling the bridge with its name.</summary>
    private static Type EmitProxies(string[] orchestrators, string[] activities)
    {
        var assembly = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("RealEngineProxies"), AssemblyBuilderAccess.Run);
        var module = assembly.DefineDynamicModule("RealEngineProxies");
        var type = module.DefineType("Proxies", TypeAttributes.Public | TypeAttributes.Abstract | TypeAttributes.Sealed | TypeAttributes.Class);
        var functionName = typeof(FunctionNameAttribute).GetConstructor(new[] { typeof(string) });
        var orchestrationTrigger = typeof(OrchestrationTriggerAttribute).GetConstructor(Type.EmptyTypes);
        var activityTrigger = typeof(ActivityTriggerAttribute).GetConstructor(Type.EmptyTypes);
        var orchestrate = typeof(Bridge).GetMethod(nameof(Bridge.Orchestrate));
        var activity = typeof(Bridge).GetMethod(nameof(Bridge.Activity));
        var index = 0;

        void Define(string name, Type parameter, Type result, ConstructorInfo trigger, MethodInfo target)
        {
            var method = type.DefineMethod($"f{index++}", MethodAttributes.Public | MethodAttributes.Static, result, new[] { parameter });
            method.SetCustomAttribute(new CustomAttributeBuilder(functionName, new object[] { name }));
            var p = method.DefineParameter(1, ParameterAttributes.None, "context");
            p.SetCustomAttribute(new CustomAttributeBuilder(trigger, Array.Empty<object>()));
            var il = method.GetILGenerator();
            il.Emit(OpCodes.Ldstr, name);
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Call, target);
            il.Emit(OpCodes.Ret);
        }

        foreach (var name in orchestrators) Define(name, typeof(string), typeof(Task<string>), orchestrationTrigger, orchestrate);
        foreach (var name in activities) Define(name, typeof(JToken), typeof(Task<JToken>), activityTrigger, activity);
        return type.CreateType();
    }
}

/// <summary>
/// The webhook base the client binding's management URLs are built from (the Functions host gives its
/// own); nothing calls them: the bridge's client uses the local RPC endpoint (rpcBaseUrl).
/// </summary>
public sealed class LoopbackWebHooks : IWebHookProvider
{
    public Uri GetUrl(IExtensionConfigProvider extension) => new("http://127.0.0.1:17071/runtime/webhooks/durabletask");
}

/// <summary>Only the given types hold functions.</summary>
public sealed class ExplicitTypeLocator : ITypeLocator
{
    private readonly IReadOnlyList<Type> types;
    public ExplicitTypeLocator(params Type[] types) => this.types = types;
    public IReadOnlyList<Type> GetTypes() => this.types;
}
