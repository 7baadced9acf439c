package io.strata.common.net;

import io.strata.common.exception.InvalidArgumentException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Where a client or a worker sits, tier by tier: its node (a machine) and its rack. Two parties are on the
 * same node when their node names are equal and non-empty, in the same rack when their rack names are;
 * an empty name is unknown and matches nothing. Distance is what readers and writers sort by: 0 on the
 * same node, 1 in the same rack, 2 anywhere else. Immutable value.
 *
 * <p>{@link #resolve} builds one from configured names and, optionally, a script whose output gives
 * {@code node=... rack=...}; it is run once, when the process (or client) starts.
 */
public record TieredIdentity(String node, String rack) implements java.io.Serializable {
  /** Nothing known: matches nobody. */
  public static final TieredIdentity UNKNOWN = new TieredIdentity("", "");

  public TieredIdentity {
    node = node == null ? "" : node.trim();
    rack = rack == null ? "" : rack.trim();
  }

  public boolean sameNode(TieredIdentity other) {
    return !node.isEmpty() && node.equals(other.node);
  }

  public boolean sameRack(TieredIdentity other) {
    return !rack.isEmpty() && rack.equals(other.rack);
  }

  /** 0 on the same node, 1 in the same rack, 2 otherwise. */
  public int distanceTo(TieredIdentity other) {
    return sameNode(other) ? 0 : sameRack(other) ? 1 : 2;
  }

  @Override
  public String toString() {
    return "node=" + node + " rack=" + rack;
  }

  /**
   * The identity from configured {@code node} and {@code rack} names and an optional {@code script}
   * (a command line run with {@code sh -c}, empty for none) that prints {@code node=<name>} and/or
   * {@code rack=<name>} (separated by spaces or new lines). A name the script prints wins over the
   * configured one; the node falls back to {@code defaultNode} (the host name). The script must end
   * within {@code timeout} with exit code 0; otherwise, or if it prints anything else, this fails with
   * an {@link InvalidArgumentException} naming {@code scriptKey}, the script and what was wrong.
   */
  public static TieredIdentity resolve(String node, String rack, String script, Duration timeout,
      String scriptKey, String defaultNode) throws IOException {
    String n = node == null ? "" : node.trim();
    String r = rack == null ? "" : rack.trim();
    if (script != null && !script.isBlank()) {
      String out = run(script, timeout, scriptKey);
      for (String token : out.trim().split("\\s+")) {
        if (token.isEmpty()) {
          continue;
        }
        int eq = token.indexOf('=');
        String name = eq < 0 ? token : token.substring(0, eq);
        String value = eq < 0 ? "" : token.substring(eq + 1);
        if (name.equals("node") && !value.isEmpty()) {
          n = value;
        } else if (name.equals("rack") && !value.isEmpty()) {
          r = value;
        } else {
          throw new InvalidArgumentException("The locality script '" + script + "' (" + scriptKey
              + ") printed '" + token + "': expected node=<name> and/or rack=<name>");
        }
      }
    }
    if (n.isEmpty()) {
      n = Objects.requireNonNullElse(defaultNode, "");
    }
    return new TieredIdentity(n, r);
  }

  private static String run(String script, Duration timeout, String scriptKey) throws IOException {
    Process p;
    try {
      p = new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new InvalidArgumentException("Cannot run the locality script '" + script + "' (" + scriptKey + "): "
          + e.getMessage(), e);
    }
    p.getOutputStream().close();
    // Read on another thread so a script that prints a lot and never ends still meets the timeout.
    StringBuilder out = new StringBuilder();
    Thread reader = new Thread(() -> {
      try (InputStream in = p.getInputStream()) {
        byte[] buf = in.readNBytes(64 * 1024);
        synchronized (out) {
          out.append(new String(buf, StandardCharsets.UTF_8));
        }
      } catch (IOException ignored) {
        // The process was killed; its exit status says what happened.
      }
    }, "locality-script");
    reader.setDaemon(true);
    reader.start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new InvalidArgumentException("The locality script '" + script + "' (" + scriptKey
            + ") did not finish within " + timeout.toMillis() + " ms");
      }
      reader.join(timeout.toMillis());
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new InvalidArgumentException("Interrupted while running the locality script '" + script + "'", e);
    }
    String text;
    synchronized (out) {
      text = out.toString();
    }
    if (p.exitValue() != 0) {
      throw new InvalidArgumentException("The locality script '" + script + "' (" + scriptKey + ") exited with "
          + p.exitValue() + ": " + text.trim());
    }
    return text;
  }
}
