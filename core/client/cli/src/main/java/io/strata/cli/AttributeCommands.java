package io.strata.cli;

import io.strata.client.URIStatus;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.SetAttributeOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands of hdfs that set a file's attributes: {@code chmod}, {@code chown} and
 * {@code chgrp} (stored by the master and shown by {@code ls} and {@code stat}; nothing enforces them
 * until permissions are checked), and {@code setrep} (accepted; Strata stores no replication factor).
 * Each is a picocli command object used for one run, on one thread.
 */
final class AttributeCommands {
  /** What {@code setrep} prints on stderr once: what it does and does not do. */
  static final String SETREP_NOTE = "setrep: Strata stores no replication factor: a block is cached on as many "
      + "workers as reads and eviction leave it on (a persisted file is also in the under file system), so "
      + "nothing is changed and -w has nothing to wait for";

  private AttributeCommands() {}

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
      throw new picocli.CommandLine.TypeConversionException(
          "'" + value + "' is not a replication factor (1 to " + Short.MAX_VALUE + ")");
    }
  }

  @Command(name = "setrep", description = {
      "Accepted for hdfs dfs scripts; changes nothing (no replication factor is stored).",
      "Checks that the paths exist and prints Replication N not stored: PATH for each file "
          + "(every file under a directory).",
      "Strata keeps no replication factor: a block is cached on as many workers as reads and eviction leave it on, "
          + "and a persisted file is also in the under file system."})
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
        List<URIStatus> files = new ArrayList<>(UfsCommands.filesUnder(this, path));
        files.sort(Comparator.comparing(URIStatus::path, CliPaths.TREE_ORDER));
        for (URIStatus file : files) {
          ctx.out().println("Replication " + replication + " not stored: " + file.path());
        }
      });
    }
  }

  /** Names hdfs accepts for owners and groups (its chown pattern's characters). */
  private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[-_./@a-zA-Z0-9]+");

  /** A mode for chmod; a bad one is a usage error. */
  static final class ModeConverter implements ITypeConverter<ModeChange> {
    @Override
    public ModeChange convert(String value) {
      try {
        return ModeChange.parse(value);
      } catch (IllegalArgumentException e) {
        throw new picocli.CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }

  @Command(name = "chmod", description = {
      "Change the permission mode of paths.",
      "MODE is octal (755) or symbolic (u+x,go-w, a=r, +t, X for directories).",
      "Stored by the master and shown by ls; not enforced until permissions are checked."})
  static final class Chmod extends FsSubcommand {
    @Option(names = "-R", description = "Also everything under directories.")
    boolean recursive;

    @Parameters(index = "0", paramLabel = "MODE", converter = ModeConverter.class,
        description = "Octal digits or [ugoa][+-=][rwxXt] clauses, comma-separated.")
    ModeChange mode;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "PATH")
    List<String> paths;

    Chmod(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        URIStatus status = fs().getStatus(path);
        if (mode.isAbsolute() || !recursive || status.isFile()) {
          // One call: an octal mode is the same for the whole tree, which the master sets at once.
          fs().setAttribute(path, SetAttributeOptions.defaults()
              .withMode(mode.apply(status.mode(), status.directory())).withRecursive(recursive));
          return;
        }
        // A symbolic mode depends on each path's own mode (and X on its type): one call per path.
        List<URIStatus> all = new ArrayList<>();
        all.add(status);
        fs().iterateStatus(path, ListStatusOptions.defaults().withRecursive(true), s -> {
          if (!s.path().equals(path)) {
            all.add(s);
          }
        });
        for (URIStatus s : all) {
          try {
            fs().setAttribute(s.path(), SetAttributeOptions.defaults().withMode(mode.apply(s.mode(), s.directory())));
          } catch (IOException e) {
            report(Failures.PathFailure.of(s.path(), e));
          }
        }
      });
    }
  }

  /**
   * chown and chgrp: an owner/group argument, then paths, each given the same change (with -R, in one
   * call for a whole tree).
   */
  abstract static class OwnershipCommand extends FsSubcommand {
    @Option(names = "-R", description = "Also everything under directories.")
    boolean recursive;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "PATH")
    List<String> paths;

    OwnershipCommand(CliContext ctx) {
      super(ctx);
    }

    /** The change the argument asks for; a malformed argument is a usage error. */
    abstract SetAttributeOptions change();

    /** True when {@code name} is a name hdfs accepts for an owner or a group. */
    static boolean validName(String name) {
      return NAME.matcher(name).matches();
    }

    @Override
    protected final void execute() {
      SetAttributeOptions change = change().withRecursive(recursive);
      forEach(expand(paths), path -> fs().setAttribute(path, change));
    }
  }

  @Command(name = "chown", description = {
      "Change the owner of paths (and the group, with OWNER:GROUP or :GROUP).",
      "Stored by the master and shown by ls; not enforced until permissions are checked."})
  static final class Chown extends OwnershipCommand {
    @Parameters(index = "0", paramLabel = "OWNER[:GROUP]")
    String owner;

    Chown(CliContext ctx) {
      super(ctx);
    }

    @Override
    SetAttributeOptions change() {
      int colon = owner.indexOf(':');
      String user = colon < 0 ? owner : owner.substring(0, colon);
      String group = colon < 0 ? "" : owner.substring(colon + 1);
      if ((user.isEmpty() && group.isEmpty()) || (!user.isEmpty() && !validName(user))
          || (!group.isEmpty() && !validName(group))) {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "'" + owner
            + "' is not OWNER[:GROUP]: names of letters, digits and - _ . / @");
      }
      SetAttributeOptions options = SetAttributeOptions.defaults();
      options = user.isEmpty() ? options : options.withOwner(user);
      return group.isEmpty() ? options : options.withGroup(group);
    }
  }

  @Command(name = "chgrp", description = {
      "Change the group of paths.",
      "Stored by the master and shown by ls; not enforced until permissions are checked."})
  static final class Chgrp extends OwnershipCommand {
    @Parameters(index = "0", paramLabel = "GROUP")
    String group;

    Chgrp(CliContext ctx) {
      super(ctx);
    }

    @Override
    SetAttributeOptions change() {
      if (!validName(group)) {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "'" + group
            + "' is not a group name: letters, digits and - _ . / @");
      }
      return SetAttributeOptions.defaults().withGroup(group);
    }
  }
}
