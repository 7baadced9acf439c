package io.strata.server.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;

/**
 * {@code /api/logLevel} on every process's web port, what {@code strata logLevel} talks to: GET {@code
 * ?logger=NAME} answers {@code NAME=LEVEL}; POST {@code ?logger=NAME&level=LEVEL} sets it (until the process
 * restarts; conf/log4j2.properties is untouched) and answers the same way. {@code root} names the root
 * logger. A bad name or level gets 400 saying what was wrong. Processes sharing one JVM (local mode, tests)
 * share log4j's loggers, so a change reaches all of them. Stateless; thread-safe.
 */
final class LogLevels implements HttpHandler {
  static final String PATH = "/api/logLevel";
  /** One dot-separated part of a logger name (each checked alone: a repeated group recurses per part in the JDK). */
  private static final Pattern PART = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");
  /** The longest logger name taken: far past any class name. */
  static final int NAME_MAX = 512;
  private static final Set<String> LEVELS = Set.of("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL");

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    Map<String, String> q;
    try {
      q = query(exchange.getRequestURI().getRawQuery());
    } catch (IllegalArgumentException e) {
      WebServer.respond(exchange, 400, "text/plain", "the query is not URL-encoded properly: " + e.getMessage() + "\n");
      return;
    }
    String logger = q.get("logger");
    if (logger == null || !(logger.equals("root") || isName(logger))) {
      String got = logger == null ? "none" : logger.length() > 80 ? "'" + logger.substring(0, 80) + "...' ("
          + logger.length() + " characters; at most " + NAME_MAX + ")" : "'" + logger + "'";
      WebServer.respond(exchange, 400, "text/plain", "logger must be a logger name such as io.strata.worker or "
          + "'root', got " + got + "\n");
      return;
    }
    boolean root = logger.equals("root");
    if (exchange.getRequestMethod().equals("POST")) {
      String level = q.getOrDefault("level", "").toUpperCase(Locale.ROOT);
      if (!LEVELS.contains(level)) {
        WebServer.respond(exchange, 400, "text/plain", "level must be one of OFF, FATAL, ERROR, WARN, INFO, DEBUG, "
            + "TRACE, ALL, got '" + q.getOrDefault("level", "") + "'\n");
        return;
      }
      if (root) {
        Configurator.setRootLevel(Level.valueOf(level));
      } else {
        Configurator.setLevel(logger, Level.valueOf(level));
      }
    }
    Level now = root ? LogManager.getRootLogger().getLevel() : LogManager.getLogger(logger).getLevel();
    WebServer.respond(exchange, 200, "text/plain", logger + "=" + now + "\n");
  }

  /** A dotted Java-like name of at most {@link #NAME_MAX} characters. */
  static boolean isName(String s) {
    if (s.isEmpty() || s.length() > NAME_MAX) {
      return false;
    }
    for (String part : s.split("\\.", -1)) {
      if (!PART.matcher(part).matches()) {
        return false;
      }
    }
    return true;
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> out = new HashMap<>();
    if (raw == null) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }
}
