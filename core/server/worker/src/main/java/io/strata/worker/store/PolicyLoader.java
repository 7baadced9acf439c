package io.strata.worker.store;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;

/**
 * Instantiates a configured policy class ({@link Allocator}, {@link BlockAnnotator}) by name, failing with
 * an {@link IllegalArgumentException} that names the configured value and what is wrong with it.
 *
 * <p>Classes are loaded with the thread context class loader (falling back to this class's loader), so a
 * policy shipped on the worker's class path or by a plugin loader is found. Stateless and thread-safe.
 */
final class PolicyLoader {
  private PolicyLoader() {}

  /**
   * A new instance of {@code className}, which must implement {@code type} and have a public no-arg
   * constructor. {@code what} names the setting in messages ("allocator"); {@code shortNames} lists the
   * built-in names, so the message can suggest them.
   */
  static <T> T instantiate(String what, String className, Class<T> type, String shortNames) {
    String expected = "expected " + shortNames + " or the name of a class implementing " + type.getName();
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    if (loader == null) {
      loader = PolicyLoader.class.getClassLoader();
    }
    Class<?> cls;
    try {
      cls = Class.forName(className, false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalArgumentException(
          "Unknown " + what + " '" + className + "': no such class; " + expected, e);
    }
    if (!type.isAssignableFrom(cls)) {
      throw new IllegalArgumentException(
          "Bad " + what + " '" + className + "': does not implement " + type.getName());
    }
    if (Modifier.isAbstract(cls.getModifiers())) {
      throw new IllegalArgumentException(
          "Bad " + what + " '" + className + "': is abstract and cannot be instantiated");
    }
    Constructor<?> ctor;
    try {
      ctor = cls.getConstructor();
    } catch (NoSuchMethodException e) {
      throw new IllegalArgumentException(
          "Bad " + what + " '" + className + "': has no public no-arg constructor", e);
    }
    try {
      return type.cast(ctor.newInstance());
    } catch (InvocationTargetException e) {
      throw new IllegalArgumentException(
          "Bad " + what + " '" + className + "': its constructor failed: " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalArgumentException(
          "Bad " + what + " '" + className + "': cannot be instantiated (" + e + ")", e);
    }
  }
}
