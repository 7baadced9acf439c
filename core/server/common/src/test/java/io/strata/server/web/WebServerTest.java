package io.strata.server.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A real JDK HTTP server on loopback, asked by a real HTTP client. */
class WebServerTest {
  private final HttpClient http = HttpClient.newHttpClient();

  /** A request as the CLI sends it: a POST carries the change header. */
  private HttpResponse<String> send(String method, int port, String path) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
    if (method.equals("POST")) {
      b.header(WebServer.CHANGE_HEADER, "1");
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesGetAndHead_refusesWrites_andSurvivesAFailingHandler() throws Exception {
    try (WebServer web = WebServer.start("test", "127.0.0.1", WebServer.PortChoice.of(0, 0))) {
      web.route("/hello", ex -> WebServer.respond(ex, 200, "text/plain", "hi " + ex.getRequestURI().getPath()));
      web.route("/boom", ex -> {
        throw new IllegalStateException("broken page");
      });
      HttpResponse<String> get = send("GET", web.port(), "/hello/x");
      assertThat(get.statusCode()).isEqualTo(200);
      assertThat(get.body()).isEqualTo("hi /hello/x");
      assertThat(get.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");

      HttpResponse<String> head = send("HEAD", web.port(), "/hello");
      assertThat(head.statusCode()).isEqualTo(200);
      assertThat(head.body()).isEmpty();

      HttpResponse<String> post = send("POST", web.port(), "/hello");
      assertThat(post.statusCode()).isEqualTo(405);
      assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");

      HttpResponse<String> boom = send("GET", web.port(), "/boom");
      assertThat(boom.statusCode()).isEqualTo(500);
      assertThat(boom.body()).contains("broken page");
      // It serves on after a failing handler.
      assertThat(send("GET", web.port(), "/hello").statusCode()).isEqualTo(200);
      assertThat(send("GET", web.port(), "/nothing-here").statusCode()).isEqualTo(404);
    }
  }

  @Test
  void logLevel_readsAndSetsALoggersLevel_andRefusesBadNamesAndLevels() throws Exception {
    String name = "io.strata.test.loglevel";
    try (WebServer web = WebServer.start("test", "127.0.0.1", WebServer.PortChoice.of(0, 0))) {
      HttpResponse<String> set = send("POST", web.port(), "/api/logLevel?logger=" + name + "&level=debug");
      assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
      assertThat(set.body()).isEqualTo(name + "=DEBUG\n");
      assertThat(org.apache.logging.log4j.LogManager.getLogger(name).isDebugEnabled()).isTrue();
      assertThat(send("GET", web.port(), "/api/logLevel?logger=" + name).body()).isEqualTo(name + "=DEBUG\n");
      send("POST", web.port(), "/api/logLevel?logger=" + name + "&level=ERROR");
      assertThat(org.apache.logging.log4j.LogManager.getLogger(name).isWarnEnabled()).isFalse();

      HttpResponse<String> badLevel = send("POST", web.port(), "/api/logLevel?logger=" + name + "&level=LOUD");
      assertThat(badLevel.statusCode()).isEqualTo(400);
      assertThat(badLevel.body()).contains("got 'LOUD'");
      HttpResponse<String> badName = send("POST", web.port(), "/api/logLevel?logger=a%20b&level=INFO");
      assertThat(badName.statusCode()).isEqualTo(400);
      assertThat(badName.body()).contains("got 'a b'");
      // A very long name (a regex with a repeated group recursed per part, past the thread's stack) gets a 400
      // saying so, and the server keeps answering.
      HttpResponse<String> longName = send("GET", web.port(), "/api/logLevel?logger=" + "a.".repeat(20_000) + "a");
      assertThat(longName.statusCode()).isEqualTo(400);
      assertThat(longName.body()).contains("40001 characters; at most 512");
      assertThat(send("GET", web.port(), "/api/logLevel?logger=" + name).statusCode()).isEqualTo(200);
      // A POST without the change header (what a cross-site form sends) changes nothing.
      HttpResponse<String> forged = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + web.port()
          + "/api/logLevel?logger=" + name + "&level=OFF")).POST(HttpRequest.BodyPublishers.noBody()).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(forged.statusCode()).isEqualTo(403);
      assertThat(forged.body()).contains(WebServer.CHANGE_HEADER);
      assertThat(org.apache.logging.log4j.LogManager.getLogger(name).isErrorEnabled()).isTrue();
      // Every other route stays read-only.
      web.route("/page", ex -> WebServer.respond(ex, 200, "text/plain", "ok"));
      assertThat(send("POST", web.port(), "/page").statusCode()).isEqualTo(405);
    }
  }

  @Test
  void clientsThatSendHalfARequestAndWait_cannotStopTheServerAnswering() throws Exception {
    try (WebServer web = WebServer.start("test", "127.0.0.1", WebServer.PortChoice.of(0, 0))) {
      web.route("/hello", ex -> WebServer.respond(ex, 200, "text/plain", "hi"));
      List<java.net.Socket> stalled = new ArrayList<>();
      try {
        // More than the pool's threads and queue together: each sends a request line and never ends its headers.
        for (int i = 0; i < WebServer.THREADS + WebServer.QUEUE + 4; i++) {
          java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), web.port());
          s.getOutputStream().write("GET /hello HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
          stalled.add(s);
        }
        // A request past the pool's room is closed at once (the client may try again); once the stalled requests'
        // time is up (MAX_REQUEST_SECONDS) the server answers again, never stuck for as long as they like.
        HttpResponse<String> get = await().atMost(Duration.ofSeconds(3L * WebServer.MAX_REQUEST_SECONDS))
            .pollInterval(Duration.ofMillis(200)).ignoreException(IOException.class)
            .until(() -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + web.port() + "/hello"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()), r -> r != null);
        assertThat(get.statusCode()).isEqualTo(200);
        assertThat(get.body()).isEqualTo("hi");
      } finally {
        for (java.net.Socket s : stalled) {
          s.close();
        }
      }
    }
  }

  @Test
  void theDerivedPortIsTheRpcPortPlusOne_andFallsBackWhenTaken_butAnExplicitPortMustBeFree() throws Exception {
    assertThat(WebServer.PortChoice.of(-1, 19998)).isEqualTo(new WebServer.PortChoice(19999, false));
    assertThat(WebServer.PortChoice.of(-1, 0)).isEqualTo(new WebServer.PortChoice(0, false));
    assertThat(WebServer.PortChoice.of(0, 19998)).isEqualTo(new WebServer.PortChoice(0, false));
    assertThat(WebServer.PortChoice.of(8080, 19998)).isEqualTo(new WebServer.PortChoice(8080, true));
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      int busy = taken.getLocalPort();
      try (WebServer web = WebServer.start("test", "127.0.0.1", WebServer.PortChoice.of(-1, busy - 1))) {
        assertThat(web.port()).isNotEqualTo(busy).isPositive();
        web.route("/", ex -> WebServer.respond(ex, 200, "text/plain", "ok"));
        assertThat(send("GET", web.port(), "/").body()).isEqualTo("ok");
      }
      assertThatThrownBy(() -> WebServer.start("test", "127.0.0.1", WebServer.PortChoice.of(busy, 0)))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("web port 127.0.0.1:" + busy + " is in use");
    }
  }

  /** The status line of a GET of {@code path} sent with {@code host} as its Host header (null: none, HTTP/1.0). */
  private static String statusWithHost(int port, String path, String host) throws IOException {
    try (java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(10_000);
      String request = host == null ? "GET " + path + " HTTP/1.0\r\n\r\n"
          : "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
      s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return answer.substring(0, answer.indexOf("\r\n")) + " " + answer.substring(answer.indexOf("\r\n\r\n") + 4);
    }
  }

  @Test
  void aRequestNamingThisServerByAnUnknownName_isRefused_soARebindingPageCannotReadIt() throws Exception {
    WebServer.HostCheck hosts = WebServer.HostCheck.of(List.of("ui.example.org"), "127.0.0.1", "Worker7.Local");
    try (WebServer web = WebServer.start("test", "127.0.0.1", WebServer.PortChoice.of(0, 0), hosts)) {
      web.route("/hello", ex -> WebServer.respond(ex, 200, "text/plain", "hi"));
      int p = web.port();
      // Addresses, localhost, the server's own names (any case, with or without the port) and configured ones.
      for (String ok : new String[] {"127.0.0.1:" + p, "10.1.2.3", "[::1]:" + p, "localhost:" + p,
          "worker7.local:" + p, "WORKER7.LOCAL.", "ui.example.org:" + p}) {
        assertThat(statusWithHost(p, "/hello", ok)).as(ok).startsWith("HTTP/1.1 200").endsWith("hi");
      }
      assertThat(statusWithHost(p, "/hello", null)).startsWith("HTTP/1.1 200");
      // A name this server does not know: what a DNS-rebinding page's requests carry.
      for (String bad : new String[] {"attacker.example:" + p, "127.0.0.1.attacker.example", "worker7"}) {
        assertThat(statusWithHost(p, "/hello", bad)).as(bad).startsWith("HTTP/1.1 403")
            .contains("strata.web.allowed.hosts");
      }
      // The refusal covers every route, the log-level change included.
      assertThat(statusWithHost(p, "/api/logLevel?logger=x", "attacker.example")).startsWith("HTTP/1.1 403");
    }
    WebServer.HostCheck any = WebServer.HostCheck.of(List.of("*"), "127.0.0.1");
    assertThat(any.allows("attacker.example")).isTrue();
    assertThat(WebServer.HostCheck.of(List.of(), "127.0.0.1").allows("attacker.example")).isFalse();
    // A name configured with its port matches that name on any port.
    assertThat(WebServer.HostCheck.of(List.of("UI.example.org:8080"), "127.0.0.1").allows("ui.example.org:19999"))
        .isTrue();
  }
}
