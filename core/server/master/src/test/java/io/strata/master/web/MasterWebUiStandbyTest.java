package io.strata.master.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.common.conf.StrataConf;
import io.strata.master.MasterProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real HA masters on one journal and a real ZooKeeper (Curator's TestingServer): the leader's web UI
 * serves the cluster pages; the standby's says it is a standby, links nothing that needs the leader, and
 * answers those pages with 503; both serve their configuration.
 */
class MasterWebUiStandbyTest {
  @TempDir
  Path tmp;
  private final HttpClient http = HttpClient.newHttpClient();

  private MasterProcess master(TestingServer zk) throws Exception {
    Map<String, String> c = new HashMap<>();
    c.put("strata.master.journal.dir", tmp.resolve("journal").toString());
    c.put("strata.master.mount.table.root.ufs", tmp.resolve("underFSStorage").toString());
    c.put("strata.master.journal.tail.interval", "50ms");
    c.put("strata.zookeeper.address", zk.getConnectString());
    c.put("strata.zookeeper.session.timeout", "3s");
    c.put("strata.master.rpc.port", "0");
    c.put("strata.master.web.port", "0");
    c.put("strata.master.bind.host", "127.0.0.1");
    c.put("strata.master.hostname", "localhost");
    return new MasterProcess(StrataConf.of(c), Clock.systemUTC()).start();
  }

  private HttpResponse<String> get(MasterProcess m, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + m.web().port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void standbySaysSo_andLinksNothingThatNeedsTheLeader() throws Exception {
    try (TestingServer zk = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, null,
        "127.0.0.1"), true); MasterProcess a = master(zk); MasterProcess b = master(zk)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> a.isLeading() || b.isLeading());
      MasterProcess leader = a.isLeading() ? a : b;
      MasterProcess standby = leader == a ? b : a;

      HttpResponse<String> lead = get(leader, "/");
      assertThat(lead.statusCode()).isEqualTo(200);
      assertThat(lead.body()).contains("<th>Role</th><td>leader</td>", "<th>Live workers</th><td>0</td>",
          "href=\"/workers\"", "href=\"/browse?path=%2F\"");
      assertThat(get(leader, "/browse?path=/").statusCode()).isEqualTo(200);

      HttpResponse<String> stand = get(standby, "/");
      assertThat(stand.statusCode()).isEqualTo(200);
      assertThat(stand.body()).contains("<th>Role</th><td>standby</td>", "This master is a standby")
          .doesNotContain("href=\"/workers\"", "href=\"/browse", "href=\"/mounts\"", "Live workers");
      for (String page : List.of("/workers", "/browse?path=/", "/mounts")) {
        HttpResponse<String> r = get(standby, page);
        assertThat(r.statusCode()).as(page).isEqualTo(503);
        assertThat(r.body()).contains("is a standby");
      }
      assertThat(get(standby, "/config").statusCode()).isEqualTo(200);
      assertThat(get(standby, "/config").body()).contains("strata.zookeeper.address");
    }
  }
}
