package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A context's close forgets its metadata cache: nothing a closed client knew stays in memory to be answered. The
 * context is made with no master listening (a client starts with its own configuration then), on loopback.
 */
class FileSystemContextCloseTest {
  @Test
  void close_clearsTheMetadataCache() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // free once closed: nothing answers there
    }
    StrataConf conf = StrataConf.of(Map.of(CommonKeys.MASTER_HOSTNAME.name(), "localhost",
        CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(port), ClientKeys.METADATA_CACHE_ENABLED.name(), "true"));
    FileSystemContext context = new FileSystemContext(conf);
    MetadataCache cache = context.metadataCache();
    cache.putExists("/kept", true, cache.generation());
    assertThat(cache.size()).isEqualTo(1);
    context.close();
    assertThat(cache.size()).isZero();
    assertThat(cache.exists("/kept")).isNull();
    context.close(); // again: nothing
  }
}
