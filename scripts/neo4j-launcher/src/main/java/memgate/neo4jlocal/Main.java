package memgate.neo4jlocal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.ConnectorPortRegister;
import org.neo4j.configuration.connectors.ConnectorType;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * Runs a real Neo4j Community database in this JVM with a Bolt connector on loopback,
 * and serves Neo4j Browser's static files beside it. Local development and CI only:
 * authentication is off, so it never listens on anything but 127.0.0.1.
 *
 * It is compiled against Neo4j 5.26 with Java 17, and runs unchanged with Neo4j 2026's
 * jars on a Java 21+ runtime: the embedded API it uses is the same in both.
 *
 * Settings come from the environment (scripts/neo4j-local sets them):
 * NEO4J_LOCAL_BOLT_PORT (7687; 0 = a free port, printed on the ready line),
 * NEO4J_LOCAL_HTTP_PORT (7474, 0 = no Browser),
 * NEO4J_LOCAL_DATA (.data/neo4j), NEO4J_LOCAL_PAGECACHE_MB (256),
 * NEO4J_LOCAL_REPLAN_SECONDS (Neo4j's dbms.cypher.min_replan_interval; unset = Neo4j's
 * 10 s): how long a cached query plan is kept before Neo4j checks whether the graph's
 * statistics have moved enough to plan the query again.
 * NEO4J_LOCAL_SETTINGS: more Neo4j settings, "name=value" pairs separated by spaces,
 * read as a neo4j.conf would be (for settings the launcher does not set itself).
 */
public final class Main {
    private static final String LOOPBACK = "127.0.0.1";
    /** The Neo4j version on the classpath, from the neo4j jar's manifest. */
    private static final String VERSION = String.valueOf(
            DatabaseManagementServiceBuilder.class.getPackage().getImplementationVersion());

    public static void main(String[] args) throws Exception {
        int boltPort = intEnv("NEO4J_LOCAL_BOLT_PORT", 7687);
        int httpPort = intEnv("NEO4J_LOCAL_HTTP_PORT", 7474);
        Path data = Path.of(env("NEO4J_LOCAL_DATA", ".data/neo4j")).toAbsolutePath();
        long pageCache = intEnv("NEO4J_LOCAL_PAGECACHE_MB", 256) * 1024L * 1024L;

        long started = System.nanoTime();
        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(data);
        int replan = intEnv("NEO4J_LOCAL_REPLAN_SECONDS", 0);
        if (replan > 0) {
            builder.setConfig(GraphDatabaseSettings.cypher_min_replan_interval, Duration.ofSeconds(replan));
        }
        builder
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(LOOPBACK, boltPort))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(LOOPBACK, boltPort))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "1 files")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false);
        String more = settingsEnv("NEO4J_LOCAL_SETTINGS");
        if (!more.isEmpty()) {
            Path file = Files.createTempFile("neo4j-local", ".conf");
            Files.writeString(file, more);
            file.toFile().deleteOnExit();
            builder.loadPropertiesFromFile(file);
        }
        DatabaseManagementService dbms = builder.build();

        HttpServer browser = httpPort > 0 ? serveBrowser(httpPort, boltPort) : null;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("neo4j-local: shutting down");
            if (browser != null) {
                browser.stop(0);
            }
            dbms.shutdown();
            System.out.println("neo4j-local: stopped");
        }, "neo4j-local-shutdown"));

        // Block until the default database is available; the shell script then waits
        // for Bolt to accept connections.
        GraphDatabaseAPI db = (GraphDatabaseAPI) dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        db.isAvailable(Duration.ofMinutes(2).toMillis());
        // The port Bolt bound: the one asked for, or the kernel's choice for port 0.
        int bound = db.getDependencyResolver().resolveDependency(ConnectorPortRegister.class)
                .getLocalAddress(ConnectorType.BOLT).getPort();
        System.out.printf("neo4j-local: ready bolt://%s:%d in %d ms (Neo4j %s, Java %s)%s%n", LOOPBACK, bound,
                Duration.ofNanos(System.nanoTime() - started).toMillis(), VERSION, Runtime.version().feature(),
                browser != null ? String.format(", Browser at http://%s:%d/browser/", LOOPBACK, httpPort) : "");
        Thread.currentThread().join();
    }

    /**
     * Serves the Browser's files from the neo4j-browser jar under /browser/, and the
     * discovery document at / that tells the Browser where Bolt is. The Browser speaks
     * Bolt over WebSocket, which Neo4j's Bolt connector accepts on the same port.
     */
    private static HttpServer serveBrowser(int httpPort, int boltPort) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(LOOPBACK, httpPort), 0);
        String discovery = String.format(
                "{\"bolt_direct\":\"bolt://%1$s:%2$d\",\"bolt_routing\":\"neo4j://%1$s:%2$d\","
                        + "\"neo4j_version\":\"%3$s\",\"neo4j_edition\":\"community\"}",
                LOOPBACK, boltPort, VERSION);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/")) {
                String accept = exchange.getRequestHeaders().getFirst("Accept");
                if (accept != null && accept.contains("text/html")) {
                    exchange.getResponseHeaders().add("Location", "/browser/");
                    send(exchange, 303, "text/plain", new byte[0]);
                } else {
                    send(exchange, 200, "application/json", discovery.getBytes(StandardCharsets.UTF_8));
                }
                return;
            }
            if (!path.startsWith("/browser/") || path.contains("..")) {
                send(exchange, 404, "text/plain", "not found".getBytes(StandardCharsets.UTF_8));
                return;
            }
            String resource = path.endsWith("/") ? path + "index.html" : path;
            try (InputStream in = Main.class.getResourceAsStream(resource)) {
                if (in == null) {
                    send(exchange, 404, "text/plain", "not found".getBytes(StandardCharsets.UTF_8));
                    return;
                }
                send(exchange, 200, contentType(resource), in.readAllBytes());
            }
        });
        server.start();
        return server;
    }

    private static final Map<String, String> TYPES = Map.of(
            ".html", "text/html; charset=utf-8", ".js", "application/javascript", ".css", "text/css",
            ".json", "application/json", ".svg", "image/svg+xml", ".png", "image/png",
            ".woff", "font/woff", ".woff2", "font/woff2", ".ico", "image/x-icon");

    private static String contentType(String path) {
        int dot = path.lastIndexOf('.');
        return dot < 0 ? "application/octet-stream" : TYPES.getOrDefault(path.substring(dot), "application/octet-stream");
    }

    private static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().add("Content-Type", type);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** The name=value pairs of the variable name, one per line as in neo4j.conf. */
    private static String settingsEnv(String name) {
        StringBuilder conf = new StringBuilder();
        for (String pair : env(name, "").trim().split("\\s+")) {
            if (pair.isEmpty()) {
                continue;
            }
            if (pair.indexOf('=') <= 0) {
                throw new IllegalArgumentException(name + " holds name=value pairs, got '" + pair + "'");
            }
            conf.append(pair).append('\n');
        }
        return conf.toString();
    }

    private static int intEnv(String name, int fallback) {
        String value = env(name, null);
        if (value == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got '" + value + "'");
        }
    }
}
