package io.strata.server.web;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The web UI's HTML: the one escaping rule every name, path, value and message goes through
 * ({@link #escape}), markup that is trusted because it was built here ({@link Markup}), and a page
 * builder ({@link Page}) whose text arguments are escaped unless they are {@link Markup}, so a page cannot
 * put a file name, a worker address or a configuration value into the HTML unescaped by forgetting to.
 *
 * <p>Pages are sent with a Content-Security-Policy that allows no script at all and only the page's own
 * inline style: were anything to slip through, a browser would still not run it. Static helpers are
 * stateless; a {@link Page} is built by one thread.
 */
public final class Html {
  /** No scripts, no frames, no outside requests: the pages are plain HTML and one inline style sheet. */
  public static final String CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
      + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

  private static final String STYLE = "body{font-family:sans-serif;margin:0;color:#222}"
      + "nav{background:#23395d;padding:.5em 1em}nav a{color:#fff;margin-right:1.2em;text-decoration:none}"
      + "nav .role{float:right;color:#ffd75e}main{padding:0 1em 1em}h1 a{color:#23395d}"
      + "table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:.2em .6em;"
      + "text-align:left;vertical-align:top}th{background:#eef}td.num{text-align:right;font-family:monospace}"
      + "pre{background:#f6f6f6;border:1px solid #ddd;padding:.5em;white-space:pre-wrap;word-break:break-all}"
      + ".bad{color:#b00;font-weight:bold}.ok{color:#070}.note{color:#555}";

  private Html() {}

  /** Markup built here from escaped parts: put into a page as it is. */
  public record Markup(String html) {
    @Override
    public String toString() {
      return html;
    }
  }

  /**
   * {@code s} as HTML text, safe in element content and in quoted attribute values: {@code & < > " '}
   * become entities, control characters other than tab and newline become U+FFFD (they have no place in
   * HTML), and null is the empty string.
   */
  public static String escape(String s) {
    if (s == null) {
      return "";
    }
    StringBuilder b = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      String rep = switch (c) {
        case '&' -> "&amp;";
        case '<' -> "&lt;";
        case '>' -> "&gt;";
        case '"' -> "&quot;";
        case '\'' -> "&#39;";
        default -> (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ? "\uFFFD" : null;
      };
      if (rep != null && b == null) {
        b = new StringBuilder(s.length() + 16).append(s, 0, i);
      }
      if (b != null) {
        if (rep != null) {
          b.append(rep);
        } else {
          b.append(c);
        }
      }
    }
    return b == null ? s : b.toString();
  }

  /** Text as markup (escaped). */
  public static Markup text(Object value) {
    return new Markup(escape(String.valueOf(value)));
  }

  /** A link; the href is built by {@link #href} (or is a fixed path), the text is escaped. */
  public static Markup link(String href, Object text) {
    return new Markup("<a href=\"" + escape(href) + "\">" + escape(String.valueOf(text)) + "</a>");
  }

  /** A span of class {@code cls} (a fixed name) holding escaped text. */
  public static Markup span(String cls, Object text) {
    return new Markup("<span class=\"" + escape(cls) + "\">" + escape(String.valueOf(text)) + "</span>");
  }

  /** {@code path?k1=v1&k2=v2} with the values percent-encoded (escape it again when it goes into HTML). */
  public static String href(String path, String... keysAndValues) {
    StringBuilder b = new StringBuilder(path);
    for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
      b.append(i == 0 ? '?' : '&').append(keysAndValues[i]).append('=')
          .append(URLEncoder.encode(keysAndValues[i + 1], StandardCharsets.UTF_8).replace("+", "%20"));
    }
    return b.toString();
  }

  /** The query parameters of a request, decoded (the first value of each name). */
  public static Map<String, String> query(HttpExchange exchange) {
    Map<String, String> out = new LinkedHashMap<>();
    String raw = exchange.getRequestURI().getRawQuery();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String k = eq < 0 ? pair : pair.substring(0, eq);
      String v = eq < 0 ? "" : pair.substring(eq + 1);
      try {
        out.putIfAbsent(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        // A malformed escape: the parameter is ignored (the page then says what it misses).
      }
    }
    return out;
  }

  /** Sends a page (or, with {@code status} 404 and the like, an error page) with the script-free policy. */
  public static void send(HttpExchange exchange, int status, Page page) throws IOException {
    exchange.getResponseHeaders().set("Content-Security-Policy", CSP);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    WebServer.respond(exchange, status, "text/html", page.render());
  }

  /** One HTML page: a title, a navigation bar, then headings, paragraphs, tables and text blocks in order. */
  public static final class Page {
    private final String title;
    private int status = 200;
    private final StringBuilder nav = new StringBuilder();
    private final StringBuilder body = new StringBuilder();

    public Page(String title) {
      this.title = title;
    }

    /** The HTTP status the page is sent with, where its sender takes it from the page (200 unless set). */
    public Page status(int code) {
      this.status = code;
      return this;
    }

    public int status() {
      return status;
    }

    /** A navigation link (nav bar, left to right). */
    public Page nav(String href, String text) {
      nav.append(link(href, text));
      return this;
    }

    /** A note at the right of the nav bar (the master's role). */
    public Page navNote(String text) {
      nav.append(span("role", text));
      return this;
    }

    public Page h1(Object text) {
      body.append("<h1>").append(cell(text)).append("</h1>\n");
      return this;
    }

    public Page h2(Object text) {
      body.append("<h2>").append(cell(text)).append("</h2>\n");
      return this;
    }

    /** A paragraph of parts, each escaped unless it is {@link Markup}. */
    public Page p(Object... parts) {
      body.append("<p>");
      for (Object part : parts) {
        body.append(cell(part));
      }
      body.append("</p>\n");
      return this;
    }

    /** Preformatted text (escaped), with an id for tests and links. */
    public Page pre(String id, String text) {
      body.append("<pre id=\"").append(escape(id)).append("\">").append(escape(text)).append("</pre>\n");
      return this;
    }

    /** Key/value rows (a stat): keys and values escaped unless Markup. */
    public Page keyValues(String id, Map<String, ?> rows) {
      body.append("<table id=\"").append(escape(id)).append("\">\n");
      for (Map.Entry<String, ?> e : rows.entrySet()) {
        body.append("<tr><th>").append(escape(e.getKey())).append("</th><td>").append(cell(e.getValue()))
            .append("</td></tr>\n");
      }
      body.append("</table>\n");
      return this;
    }

    /** A table with a header row; each cell escaped unless Markup, numbers right-aligned. */
    public Page table(String id, List<String> headers, List<List<?>> rows) {
      body.append("<table id=\"").append(escape(id)).append("\">\n<tr>");
      for (String h : headers) {
        body.append("<th>").append(escape(h)).append("</th>");
      }
      body.append("</tr>\n");
      for (List<?> row : rows) {
        body.append("<tr>");
        for (Object c : row) {
          body.append(td(c));
        }
        body.append("</tr>\n");
      }
      body.append("</table>\n");
      return this;
    }

    private static String td(Object c) {
      return (c instanceof Number ? "<td class=\"num\">" : "<td>") + cell(c) + "</td>";
    }

    private static String cell(Object c) {
      return c instanceof Markup m ? m.html() : escape(String.valueOf(c));
    }

    public String render() {
      return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title)
          + "</title><style>" + STYLE + "</style></head>\n<body><nav>" + nav + "</nav>\n<main>\n" + body
          + "</main></body></html>\n";
    }
  }
}
