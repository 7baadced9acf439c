package io.strata.minicluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for the servers tests start: chosen below the kernel's ephemeral range. A test picks a port
 * and its server binds it later (a script's JVM a second or two later); a port of the ephemeral range may meanwhile
 * become the source port of some outgoing connection (the cluster's own clients included), and the server then fails
 * to bind ("Failed to bind to address /127.0.0.1:32863" once in CI). Ports below that range are only taken by
 * servers that ask for them.
 *
 * <p>Stateless; thread-safe.
 */
public final class FreePorts {
  private FreePorts() {}

  /** A port that nothing listens on at 127.0.0.1 now, below the ephemeral range when that range leaves room. */
  public static int loopback() throws IOException {
    int below = ephemeralLow();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 100 && below > 10_000; attempt++) {
      int port = random.nextInt(10_000, below);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
        return port;
      } catch (IOException inUse) {
        // another one
      }
    }
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  /** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
  static int ephemeralLow() {
    // Read as a stream: procfs files report a size of 0, and Files.readString trusts the size (it read "3" of
    // "32768 60999" here, so every port came from the ephemeral range after all).
    try (java.io.InputStream in = Files.newInputStream(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
      return Integer.parseInt(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII).trim()
          .split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }
}
