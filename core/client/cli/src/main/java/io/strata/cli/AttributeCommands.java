package io.strata.cli;

import io.strata.client.URIStatus;
import io.strata.client.options.ListStatusOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands of hdfs that set a file's attributes: {@code setrep} (accepted; Strata
 * stores no replication factor). Each is a picocli command object used for one run, on one thread.
 */
final class AttributeCommands {
  /** What {@code setrep} prints on stderr once: what it does and does not do. */
  static final String SETREP_NOTE = "setrep: Strata stores no replication factor: a block is cached on as many "
      + "workers as reads and eviction leave it on (a persisted file is also in the under file system), so "
      + "nothing is changed and -w has nothing to wait for";

  private AttributeCommands() {}

  /** The files a path stands for: itself, or every file under a directory (depth first). */
  static List<URIStatus> filesOf(FsSubcommand cmd, String path) throws IOException {
    URIStatus status = cmd.fs().getStatus(path);
    if (status.isFile()) {
      return List.of(status);
    }
    List<URIStatus> files = new ArrayList<>();
    cmd.fs().iterateStatus(path, ListStatusOptions.defaults().withRecursive(true), s -> {
      if (s.isFile()) {
        files.add(s);
      }
    });
    files.sort(Comparator.comparing(URIStatus::path, CliPaths.TREE_ORDER));
    return files;
  }

  /** A replication factor: a whole number from 1 to 32767 (HDFS's range); else a usage error. */
  static final class ReplicationConverter implements ITypeConverter<Short> {
    @Override
    public Short convert(String value) {
      try {
        int n = Integer.parseInt(value);
        if (n >= 1 && n <= Short.MAX_VALUE) {
          return (short) n;
        }
      } catch (NumberFormatException e) {
        // fall through to the message
      }
      throw new IllegalArgumentException("'" + value + "' is not a replication factor (1 to " + Short.MAX_VALUE + ")");
    }
  }

  @Command(name = "setrep", description = {
      "Accepted for scripts written for hdfs dfs: checks that the paths exist and prints",
      "Replication N not stored: PATH for each file (every file under a directory), changing nothing.",
      "Strata keeps no replication factor: a block is cached on as many workers as reads and eviction",
      "leave it on, and a persisted file is also in the under file system."})
  static final class SetRep extends FsSubcommand {
    @Option(names = "-R", description = "Accepted (a directory always means every file under it, as in hdfs).")
    boolean recursive;

    @Option(names = "-w", description = "Accepted; there is nothing to wait for.")
    boolean await;

    @Parameters(index = "0", paramLabel = "N", converter = ReplicationConverter.class,
        description = "The replication factor hdfs would set.")
    short replication;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "PATH")
    List<String> paths;

    SetRep(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      ctx.err().println(SETREP_NOTE);
      forEach(expand(paths), path -> {
        for (URIStatus file : filesOf(this, path)) {
          ctx.out().println("Replication " + replication + " not stored: " + file.path());
        }
      });
    }
  }
}
