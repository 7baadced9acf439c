package io.strata.server.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.strata.server.GrpcServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process's read-only HTTP port: the web UI and {@code /metrics} of a master or a worker, on the JDK's
 * built-in HTTP server (no servlet container).
 *
 * <p>Only GET and HEAD are answered (anything else gets 405), but for the one change it accepts: a POST to
 * {@link LogLevels#PATH} sets a logger's level ({@code strata logLevel}), and only with the header
 * {@value #CHANGE_HEADER} (which a web page of another site cannot make a browser send: no cross-site form can
 * change a level); a handler that throws gets a 500 with a plain-text message, and the server serves on. Requests
 * run on a small fixed pool ({@value #THREADS} threads, {@value #QUEUE} queued); past that a connection is closed
 * at once, so a scraper storm never grows the process nor stalls the accepting thread. A request must arrive whole
 * within {@value #MAX_REQUEST_SECONDS} s and its answer be taken within {@value #MAX_RESPONSE_SECONDS} s (the JDK
 * server's {@code sun.net.httpserver.maxReqTime} and {@code maxRspTime}, set for the process unless set already),
 * so clients that send half a request and wait cannot hold the pool's threads. A request whose {@code Host} header
 * names this server by a name it does not know gets 403 ({@link HostCheck}): a page of another site whose name was
 * made to resolve to this host (DNS rebinding) cannot read the pages from a browser. Handlers must not block on
 * anything but their own process's state (no RPC to another process while holding a lock).
 *
 * <p>The port: an explicitly configured port must be free, or start fails naming it. The derived default
 * (the process's RPC port + 1: 19999 for a master on 19998, 30000 for a worker on 29999) falls back to a
 * free port with a warning when it is taken, since tests and local clusters pick RPC ports without
 * knowing their neighbours; {@link #port()} says which port was bound. Routes may be added before or
 * after {@link #start}. Thread-safe.
 */
public final class WebServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WebServer.class);
  static final int THREADS = 4;
  static final int QUEUE = 64;
  /** The header a change (POST) must carry; its value is not looked at. */
  public static final String CHANGE_HEADER = "X-Strata-Change";
  static final int MAX_REQUEST_SECONDS = 10;
  static final int MAX_RESPONSE_SECONDS = 60;

  static {
    // Read once, when the JDK's server is first used in this process: before any web server here starts.
    setIfUnset("sun.net.httpserver.maxReqTime", Integer.toString(MAX_REQUEST_SECONDS));
    setIfUnset("sun.net.httpserver.maxRspTime", Integer.toString(MAX_RESPONSE_SECONDS));
    setIfUnset("jdk.httpserver.maxConnections", "256");
  }

  private static void setIfUnset(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  /**
   * Which {@code Host} header values a request may carry: an IP literal, {@code localhost}, the process's own names
   * (its bind host and advertised hostname), the names of {@code strata.web.allowed.hosts}, or anything when that
   * holds {@code *}. A browser always sends the name it resolved, so a rebinding site's name is refused; a request
   * without the header (HTTP/1.0 tools) passes. Names compare case-insensitively, without the port.
   */
  public record HostCheck(java.util.Set<String> names, boolean any) {
    public static HostCheck of(java.util.List<String> configured, String... ownNames) {
      java.util.Set<String> names = new java.util.HashSet<>();
      names.add("localhost");
      for (String n : ownNames) {
        if (n != null && !n.isEmpty()) {
          names.add(n.toLowerCase(java.util.Locale.ROOT));
        }
      }
      boolean any = false;
      for (String n : configured) {
        any |= n.equals("*");
        names.add(nameOf(n.trim().toLowerCase(java.util.Locale.ROOT))); // a name given with its port: the name
      }
      return new HostCheck(java.util.Set.copyOf(names), any);
    }

    /** Whether a request with this {@code Host} header (null: none) is served. */
    public boolean allows(String hostHeader) {
      if (any || hostHeader == null) {
        return true;
      }
      String h = hostHeader.trim().toLowerCase(java.util.Locale.ROOT);
      if (h.startsWith("[")) {
        return h.indexOf(']') > 0; // an IPv6 literal, with or without a port
      }
      String name = nameOf(h);
      return name.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}") || names.contains(name);
    }

    /** A host name without its port and trailing dot. */
    private static String nameOf(String hostAndPort) {
      int colon = hostAndPort.indexOf(':');
      String name = colon >= 0 ? hostAndPort.substring(0, colon) : hostAndPort;
      return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
    }
  }

  /** How the web port is chosen from a configured value and the process's RPC port. */
  public record PortChoice(int port, boolean explicit) {
    /**
     * {@code configured} is the key's value: -1 means "RPC port + 1" (0 when the RPC port is 0, i.e. a free
     * port), 0 a free port, anything else that exact port.
     */
    public static PortChoice of(int configured, int rpcPort) {
      if (configured >= 0) {
        return new PortChoice(configured, configured != 0);
      }
      return new PortChoice(rpcPort == 0 ? 0 : rpcPort + 1, false);
    }
  }

  private final String name;
  private final HttpServer server;
  private final ThreadPoolExecutor pool;
  private final HostCheck hosts;
  /** What the pages hold that outlives a request (a page's pooled channels), closed after the server stops. */
  private final java.util.List<AutoCloseable> closeWith = new java.util.concurrent.CopyOnWriteArrayList<>();

  private WebServer(String name, HttpServer server, ThreadPoolExecutor pool, HostCheck hosts) {
    this.name = name;
    this.server = server;
    this.pool = pool;
    this.hosts = hosts;
  }

  /** {@link #start(String, String, PortChoice, HostCheck)} answering IP literals, localhost and the bind host. */
  public static WebServer start(String name, String bindHost, PortChoice choice) throws IOException {
    return start(name, bindHost, choice, HostCheck.of(java.util.List.of(), bindHost));
  }

  /**
   * Binds (see the class comment for the port rule) and starts serving requests whose Host {@code hosts} allows;
   * routes can be added later.
   */
  public static WebServer start(String name, String bindHost, PortChoice choice, HostCheck hosts) throws IOException {
    HttpServer http;
    try {
      http = HttpServer.create(new InetSocketAddress(bindHost, choice.port()), 64);
    } catch (BindException e) {
      if (choice.explicit()) {
        throw new IOException("The " + name + " web port " + bindHost + ":" + choice.port()
            + " is in use (set its web port key to a free port, or 0 for any)", e);
      }
      LOG.warn("The {} web port {}:{} (its RPC port + 1) is in use; serving the web UI and /metrics on a free "
          + "port instead", name, bindHost, choice.port());
      http = HttpServer.create(new InetSocketAddress(bindHost, 0), 64);
    }
    ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(QUEUE), GrpcServer.namedDaemon(name + "-web"),
        new ThreadPoolExecutor.AbortPolicy()); // the JDK server closes a connection its executor refuses
    pool.allowCoreThreadTimeOut(true);
    http.setExecutor(pool);
    http.start();
    WebServer web = new WebServer(name, http, pool, hosts);
    web.route(LogLevels.PATH, new LogLevels(), true);
    LOG.info("{} web server on http://{}:{}/", name, bindHost, web.port());
    return web;
  }

  /** The bound port. */
  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * Serves {@code path} (and everything under it, as the JDK server matches by prefix) with {@code handler},
   * which sees only GET and HEAD requests.
   */
  public WebServer route(String path, HttpHandler handler) {
    return route(path, handler, false);
  }

  private WebServer route(String path, HttpHandler handler, boolean post) {
    server.createContext(path, exchange -> {
      try (exchange) {
        String host = exchange.getRequestHeaders().getFirst("Host");
        if (!hosts.allows(host)) {
          respond(exchange, 403, "text/plain", "This server does not answer to the name in the Host header '" + host
              + "': add it to strata.web.allowed.hosts on this server to browse it by that name\n");
          return;
        }
        String method = exchange.getRequestMethod();
        if (!method.equals("GET") && !method.equals("HEAD") && !(post && method.equals("POST"))) {
          exchange.getResponseHeaders().set("Allow", post ? "GET, HEAD, POST" : "GET, HEAD");
          respond(exchange, 405, "text/plain", method + " is not allowed here: this server is read-only\n");
          return;
        }
        if (method.equals("POST") && !exchange.getRequestHeaders().containsKey(CHANGE_HEADER)) {
          respond(exchange, 403, "text/plain", "A change needs the header " + CHANGE_HEADER + " (strata logLevel "
              + "sends it; a browser form of another site cannot)\n");
          return;
        }
        try {
          handler.handle(exchange);
        } catch (RuntimeException | IOException e) {
          LOG.warn("{} web request {} failed", name, exchange.getRequestURI(), e);
          respond(exchange, 500, "text/plain", "The request failed: " + e + "\n");
        }
      }
    });
    return this;
  }

  /** Sends a whole response (the body is omitted for HEAD). */
  public static void respond(HttpExchange exchange, int status, String contentType, String body) throws IOException {
    respond(exchange, status, contentType, body.getBytes(StandardCharsets.UTF_8));
  }

  /** Sends a whole response (the body is omitted for HEAD). */
  public static void respond(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type",
        contentType.contains("charset") ? contentType : contentType + "; charset=utf-8");
    exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(status, head ? -1 : (body.length == 0 ? -1 : body.length));
    if (!head && body.length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  /** Closes {@code resource} when this server closes, after it stopped serving (in the order registered). */
  public WebServer closeWith(AutoCloseable resource) {
    closeWith.add(resource);
    return this;
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
    for (AutoCloseable c : closeWith) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("{} web server: closing {} failed", name, c, e);
      }
    }
  }
}
