package io.strata.server.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** The one escaping rule of the web UI, the page builder that applies it, and query parsing on a real server. */
class HtmlTest {
  @Test
  void escape_turnsEveryMarkupCharacterIntoAnEntity() {
    assertThat(Html.escape("<script>alert('x')</script> & \"q\""))
        .isEqualTo("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
    assertThat(Html.escape("plain name.txt")).isEqualTo("plain name.txt");
    assertThat(Html.escape(null)).isEmpty();
    assertThat(Html.escape("a\u0000b\u001bc\td\ne\u007f")).isEqualTo("a\uFFFDb\uFFFDc\td\ne\uFFFD");
    assertThat(Html.escape("&amp;")).as("escaped again, not taken as an entity").isEqualTo("&amp;amp;");
  }

  @Property(tries = 300)
  void escape_leavesNoMarkupCharacter_andDecodesBackToTheText(@ForAll String s) {
    String e = Html.escape(s);
    assertThat(e).doesNotContain("<", ">", "\"", "'");
    String decoded = e.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'")
        .replace("&amp;", "&");
    StringBuilder expected = new StringBuilder();
    for (char c : s.toCharArray()) {
      expected.append((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ? '\uFFFD' : c);
    }
    assertThat(decoded).isEqualTo(expected.toString());
  }

  @Test
  void page_escapesTextEverywhere_butKeepsMarkupBuiltHere() {
    String evil = "<img src=x onerror=alert(1)>";
    String html = new Html.Page("title " + evil).nav("/?a=\"b\"", evil).h1(evil).p("text ", evil, Html.link(
        Html.href("/browse", "path", "/a b&c/<x>"), evil)).keyValues("kv", Map.of(evil, evil))
        .table("t", List.of(evil), List.of(List.of(evil), List.of(42))).pre("head", "</pre>" + evil).render();
    assertThat(html).doesNotContain("<img").doesNotContain("</pre><");
    assertThat(html).contains("<title>title &lt;img src=x onerror=alert(1)&gt;</title>");
    assertThat(html).contains("<a href=\"/browse?path=%2Fa%20b%26c%2F%3Cx%3E\">&lt;img");
    assertThat(html).contains("<a href=\"/?a=&quot;b&quot;\">");
    assertThat(html).contains("<td class=\"num\">42</td>");
    assertThat(html).doesNotContain("<script");
  }

  @Test
  void query_decodesParameters_andSendSetsTheScriptFreePolicy() throws Exception {
    try (WebServer web = WebServer.start("test", "127.0.0.1", WebServer.PortChoice.of(0, 0))) {
      web.route("/q", ex -> Html.send(ex, 200, new Html.Page("q").pre("got", Html.query(ex).toString())));
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
          + web.port() + "/q?path=%2Fa%20b%3Cc%3E&path=second&flag")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
      assertThat(r.headers().firstValue("Content-Security-Policy")).hasValue(Html.CSP);
      assertThat(r.body()).contains("{path=/a b&lt;c&gt;, flag=}");
    }
  }
}
